"""Schemathesis hooks for Chorus: keep generated requests inside what the contract promises to answer at once."""

import schemathesis

# The demo log the fuzzed server starts with is longer than this, so a read that asks for a position up to here is
# caught up already. A larger one would wait 5 s and answer the contract's own `503 not_caught_up`.
CAUGHT_UP_POSITION = 1000


@schemathesis.hook
def map_headers(ctx, headers):
    if headers and "Chorus-Min-Position" in headers:
        value = headers["Chorus-Min-Position"]
        if isinstance(value, str) and value.isdecimal() and int(value) > CAUGHT_UP_POSITION:
            headers["Chorus-Min-Position"] = str(int(value) % CAUGHT_UP_POSITION)
    return headers
