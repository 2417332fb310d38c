#!/usr/bin/env python3
"""The admin console in headless Chromium, as an operator uses it: Tests/ConsoleBrowser/run starts the server.

Each step checks what a page shows against the API's own answers (with the admin token, or a user's), works the
page with the keyboard where a person would, and fails on any message the browser's console logged (a script or
style the Content-Security-Policy refused, a missing asset). Prints one line per step and `N passed, M failed`.
"""
import argparse
import json
import shutil
import sys
import time
import traceback
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import NoAlertPresentException, NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait


class Console:
    def __init__(self, base, token, output):
        self.base, self.token, self.output = base, token, output
        options = Options()
        options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
        for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1200,860"]:
            options.add_argument(argument)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        service = Service(shutil.which("chromedriver") or "/usr/bin/chromedriver")
        self.driver = webdriver.Chrome(service=service, options=options)
        self.wait = self.waiting(60)

    def waiting(self, seconds):
        """A wait that looks again when the page was replaced under it (the pages that refresh themselves)."""
        return WebDriverWait(
            self.driver, seconds, ignored_exceptions=[NoSuchElementException, StaleElementReferenceException])

    # The API, for what the pages are checked against.

    def api(self, method, path, token=None, body=None):
        request = urllib.request.Request(self.base + path, method=method)
        if token:
            request.add_header("Authorization", "Bearer " + token)
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, data, timeout=30) as answer:
                text = answer.read()
                return answer.status, json.loads(text) if text else None
        except urllib.error.HTTPError as error:
            text = error.read()
            return error.code, json.loads(text) if text else None

    def admin(self, path):
        status, body = self.api("GET", path, token=self.token)
        assert status == 200, f"{path}: {status}"
        return body

    # The browser.

    def open(self, path):
        self.driver.get(self.base + path)

    @property
    def heading(self):
        return self.driver.find_element(By.TAG_NAME, "h1").text

    def value(self, label):
        """The <dd> after the <dt> named `label`."""
        return self.driver.find_element(By.XPATH, f"//dt[normalize-space()='{label}']/following-sibling::dd[1]").text

    def button(self, name):
        return self.driver.find_element(By.XPATH, f"//button[normalize-space()='{name}']")

    def press(self, name):
        """Focuses the button named `name` and presses Enter, as a keyboard user does."""
        button = self.button(name)
        self.driver.execute_script("arguments[0].focus()", button)
        assert self.driver.switch_to.active_element == button, f"{name} takes focus"
        button.send_keys(Keys.ENTER)

    def tab_to_link(self, name, tabs=40):
        """Presses Tab until the link named `name` has focus, then Enter."""
        for _ in range(tabs):
            self.driver.switch_to.active_element.send_keys(Keys.TAB)
            active = self.driver.switch_to.active_element
            if active.tag_name == "a" and active.text == name:
                active.send_keys(Keys.ENTER)
                return
        raise AssertionError(f"Tab never reached the link {name}")

    def wait_for_heading(self, text):
        self.wait.until(lambda driver: driver.find_element(By.TAG_NAME, "h1").text == text)

    def screenshot(self, name):
        self.driver.save_screenshot(f"{self.output}/{name}.png")

    def check_console(self):
        """No message in the browser's console since the last check: CSP refusals and failed loads land there."""
        messages = [entry["message"] for entry in self.driver.get_log("browser")]
        assert not messages, f"the browser's console: {messages}"
        try:
            alert = self.driver.switch_to.alert
            raise AssertionError(f"a script ran: alert {alert.text!r}")
        except NoAlertPresentException:
            pass


def register(console, name, email):
    status, body = console.api(
        "POST", "/v1/auth/register", body={"email": email, "password": "secret-password", "name": name})
    assert status == 201, f"register {name}: {status} {body}"
    return body["user"]["id"], body["token"]


def sign_in(console, state):
    console.open("/admin")
    console.wait_for_heading("Sign in")
    assert "/admin/sign-in" in console.driver.current_url
    # The token field has the focus: type the token and press Enter, as a person with a keyboard does.
    field = console.driver.switch_to.active_element
    assert field.get_attribute("name") == "token", "the token field has the focus"
    field.send_keys(console.token + Keys.ENTER)
    console.wait_for_heading("Overview")
    console.check_console()


def overview(console, state):
    health = console.admin("/health")
    projections = console.admin("/v1/admin/projections")["projections"][0]
    assert int(console.value("Log head")) >= health["position"], (console.value("Log head"), health)
    row = console.driver.find_element(By.XPATH, "//td[normalize-space()='readModels']/..")
    assert int(row.find_elements(By.TAG_NAME, "td")[1].text) >= projections["position"]
    webhooks = console.admin("/v1/admin/webhooks")
    assert console.driver.find_element(By.XPATH, "//td[normalize-space()='Webhooks']"), "the webhook outbox"
    erasures = [e for e in console.admin("/v1/admin/erasures")["items"] if e["completedAt"] is None]
    assert console.value("Pending erasures") == str(len(erasures))
    assert webhooks["enabled"]
    refresh = console.driver.find_element(By.CSS_SELECTOR, "meta[http-equiv=refresh]").get_attribute("content")
    assert refresh == "5"
    console.screenshot("overview")
    console.check_console()


def log(console, state):
    console.tab_to_link("Log")
    console.wait_for_heading("Log")
    head = console.admin("/health")["position"]
    positions = [int(a.text) for a in console.driver.find_elements(By.CSS_SELECTOR, "tbody td:first-child a")]
    assert len(positions) == 50 and positions == sorted(positions, reverse=True) and positions[0] <= head, positions
    Select(console.driver.find_element(By.NAME, "type")).select_by_visible_text("PostCreated")
    console.driver.find_element(By.NAME, "user").send_keys(state["troll"])
    console.press("Filter")
    # The filtered page, once it replaced the one before: the troll's one post.
    console.wait.until(
        lambda driver: "type=PostCreated" in driver.current_url
        and len(driver.find_elements(By.CSS_SELECTOR, "tbody tr")) == 1
        and "PostCreated" in driver.find_element(By.CSS_SELECTOR, "tbody tr").text)
    rows = console.driver.find_elements(By.CSS_SELECTOR, "tbody tr")
    cells = rows[0].find_elements(By.TAG_NAME, "td")
    assert cells[2].text == "PostCreated" and state["post"] in cells[3].text, [cell.text for cell in cells]
    assert "<b>hello</b>" in cells[5].text, "the post's text, shown as text"
    console.screenshot("log")
    cells[0].find_element(By.TAG_NAME, "a").send_keys(Keys.ENTER)
    console.wait.until(lambda driver: driver.find_element(By.TAG_NAME, "h1").text.startswith("Event "))
    assert console.value("type") == "PostCreated" and console.value("actor") == state["troll"]
    assert json.loads(console.driver.find_element(By.TAG_NAME, "pre").text)["type"] == "PostCreated"
    console.screenshot("event")
    console.check_console()


def projections(console, state):
    console.tab_to_link("Projections")
    console.wait_for_heading("Projections")
    console.press("Rebuild")
    # The page asks for itself every second while the rebuild runs, until the new read models are swapped in.
    console.waiting(180).until(
        lambda driver: "The last rebuild was swapped in" in driver.find_element(By.TAG_NAME, "main").text)
    last = console.admin("/v1/admin/projections")["projections"][0]["lastRebuild"]
    assert last["outcome"] == "finished", last
    assert str(last["position"]) in console.driver.find_element(By.TAG_NAME, "main").text
    console.screenshot("projections")
    console.check_console()


def reports(console, state):
    console.tab_to_link("Reports")
    console.wait_for_heading("Reports")
    main = console.driver.find_element(By.TAG_NAME, "main")
    assert "<script>alert('troll')</script>" in main.text, "the name, shown as text"
    assert "<b>hello</b> <img src=x onerror=alert(1)>" in main.text, "the post, inline and as text"
    assert not main.find_elements(By.CSS_SELECTOR, "script, img, b"), "nothing the users wrote became markup"
    queue = console.admin("/v1/admin/reports")["items"]
    assert len(main.find_elements(By.CSS_SELECTOR, "article")) == len(queue)
    console.screenshot("reports")
    post_report = next(r for r in queue if r["target"]["type"] == "post" and r["target"]["id"] == state["post"])
    article = console.driver.find_element(By.ID, "report-" + post_report["id"]).find_element(By.XPATH, "..")
    button = article.find_element(By.XPATH, ".//button[normalize-space()='Remove content']")
    console.driver.execute_script("arguments[0].focus()", button)
    button.send_keys(Keys.ENTER)
    console.wait.until(lambda driver: not driver.find_elements(By.ID, "report-" + post_report["id"]))
    status, _ = console.api("GET", f"/v1/posts/{state['post']}", token=state["reporter_token"])
    assert status == 404, f"the post removed: {status}"
    resolved = console.admin("/v1/admin/reports?state=resolved")["items"]
    assert any(r["id"] == post_report["id"] and r["resolution"] == "remove_content" for r in resolved)
    console.check_console()


def users(console, state):
    console.tab_to_link("Users")
    console.wait_for_heading("Users")
    field = console.driver.find_element(By.NAME, "q")
    field.send_keys(state["troll_email"] + Keys.ENTER)
    console.wait.until(lambda driver: "q=" in driver.current_url and driver.find_elements(By.XPATH, "//dt[.='Id']"))
    status, profile = console.api("GET", f"/v1/users/{state['troll']}", token=state["reporter_token"])
    assert status == 200, status
    assert console.value("Id") == state["troll"] and console.value("E-mail") == state["troll_email"]
    assert console.value("Followers") == str(profile["followers"])
    assert console.value("Posts") == str(profile["posts"])
    sessions = console.driver.find_elements(By.XPATH, "//h2[.='Sessions']/following-sibling::table[1]/tbody/tr")
    assert len(sessions) == 1, [row.text for row in sessions]
    console.screenshot("users")
    console.press("Suspend")
    console.wait.until(lambda driver: driver.find_elements(By.XPATH, "//button[normalize-space()='Unsuspend']"))
    login = {"email": state["troll_email"], "password": "secret-password"}
    status, body = console.api("POST", "/v1/auth/login", body=login)
    assert status == 403 and body["error"]["code"] == "suspended", (status, body)
    console.press("Unsuspend")
    console.wait.until(lambda driver: driver.find_elements(By.XPATH, "//button[normalize-space()='Suspend']"))
    assert console.api("POST", "/v1/auth/login", body=login)[0] == 200
    console.check_console()


def erasures(console, state):
    console.tab_to_link("Erasures")
    console.wait_for_heading("Erasures")
    listed = console.admin("/v1/admin/erasures")["items"]
    rows = console.driver.find_elements(By.CSS_SELECTOR, "tbody tr")
    assert len(rows) == len(listed) >= 1, (len(rows), listed)
    for erasure in listed:
        assert erasure["userId"] in console.driver.find_element(By.TAG_NAME, "main").text
    console.screenshot("erasures")
    console.check_console()


def deliveries(console, state):
    console.tab_to_link("Deliveries")
    console.wait_for_heading("Deliveries")
    # The first attempts fail within the webhook timeout (10 s), sooner when the port refuses at once.
    console.waiting(60).until(lambda _: console.admin("/v1/admin/webhooks")["failing"] >= 1)
    console.driver.refresh()
    console.wait_for_heading("Deliveries")
    webhooks = console.admin("/v1/admin/webhooks")
    assert int(console.value("Delivered")) == webhooks["delivered"]
    failures = console.driver.find_elements(By.CSS_SELECTOR, "tbody tr")
    assert failures, "the failing webhooks, listed"
    console.screenshot("deliveries")
    console.press("Retry now")
    console.wait_for_heading("Deliveries")
    console.check_console()


def sign_out(console, state):
    console.press("Sign out")
    console.wait_for_heading("Sign in")
    console.open("/admin/overview")
    console.wait_for_heading("Sign in")
    console.check_console()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--output", required=True)
    arguments = parser.parse_args()
    console = Console(arguments.base, arguments.token, arguments.output)
    stamp = str(int(time.time() * 1000))
    state = {"troll_email": f"troll-{stamp}@example.com"}
    state["troll"], state["troll_token"] = register(console, "<script>alert('troll')</script>", state["troll_email"])
    reporter, state["reporter_token"] = register(console, "Reporter", f"reporter-{stamp}@example.com")
    status, post = console.api(
        "POST", "/v1/posts", token=state["troll_token"], body={"text": "<b>hello</b> <img src=x onerror=alert(1)>"})
    assert status == 201, (status, post)
    state["post"] = post["id"]
    for target in [{"postId": state["post"]}, {"userId": state["troll"]}]:
        status, _ = console.api("POST", "/v1/reports", token=state["reporter_token"], body={**target, "reason": "spam"})
        assert status == 201, status
    console.api("PUT", f"/v1/users/{state['troll']}/follow", token=state["reporter_token"])

    steps = [sign_in, overview, log, projections, reports, users, erasures, deliveries, sign_out]
    passed = failed = 0
    try:
        for step in steps:
            try:
                step(console, state)
                passed += 1
                print(f"✔ {step.__name__}")
            except Exception:
                failed += 1
                print(f"✘ {step.__name__}")
                traceback.print_exc()
                console.screenshot(f"failed-{step.__name__}")
                break
    finally:
        console.driver.quit()
    print(f"console: {passed} passed, {failed} failed")
    sys.exit(0 if failed == 0 and passed == len(steps) else 1)


if __name__ == "__main__":
    main()
