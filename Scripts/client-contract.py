#!/usr/bin/env python3
"""Prints, as JSON, the copy of openapi.yaml the client SDK is generated from (see Scripts/generate-client): without
the admins' and operators' routes, and with each nullable property (`oneOf` of `type: "null"` and one other schema)
made that other schema, and optional."""
import json
import sys

import yaml

OPERATOR_PATHS = ("/v1/admin/", "/health", "/metrics", "/openapi.yaml")


def non_null_branch(schema):
    """The other branch of a `oneOf: [{type: "null"}, {…}]` schema (in either order), else None."""
    if not isinstance(schema, dict) or set(schema) - {"oneOf", "description"}:
        return None
    branches = schema.get("oneOf", [])
    others = [branch for branch in branches if branch != {"type": "null"}]
    if len(branches) == 2 and len(others) == 1:
        return others[0]
    return None


def simplify(node):
    if isinstance(node, list):
        for item in node:
            simplify(item)
        return
    if not isinstance(node, dict):
        return
    properties = node.get("properties")
    if isinstance(properties, dict):
        for name, schema in properties.items():
            branch = non_null_branch(schema)
            if branch is None:
                continue
            properties[name] = dict(branch)
            if "description" in schema:
                properties[name]["description"] = schema["description"]
            if name in node.get("required", []):
                node["required"].remove(name)
    for value in node.values():
        simplify(value)


def main():
    with open(sys.argv[1]) as file:
        contract = yaml.safe_load(file)
    contract["paths"] = {
        path: item for path, item in contract["paths"].items() if not path.startswith(OPERATOR_PATHS)
    }
    simplify(contract)
    json.dump(contract, sys.stdout, indent=1, sort_keys=True)


main()
