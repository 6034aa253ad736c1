#!/usr/bin/env python3
"""Signs in through a real browser, as a person would: headless Chromium (driven by selenium and
chromedriver) opens the authorization URL, fills the provider's login form, approves the consent
page, and follows the redirect to wherever the provider sends it (the CLI's loopback listener).

Usage: .venv/bin/python3 Tests/Support/browser-login/browser_login.py URL
           [--username ada] [--password-file FILE] [--deny] [--profile-dir DIR] [--device]

--device: URL is a device sign-in's verification page (RFC 8628) carrying the user code; after the
login form the browser submits DOT's code page as filled in and accepts (or, with --deny, denies)
on its confirmation page, ending on DOT's status page.

The password is read from --password-file (never argv). Prints one JSON line on stdout:
{"final_url": …, "body": …} — the page the browser ended on. Exits 0 when it got there.
"""
import argparse
import json
import sys
import tempfile

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait


def main():
    p = argparse.ArgumentParser()
    p.add_argument("url")
    p.add_argument("--username", default="ada")
    p.add_argument("--password-file", required=True)
    p.add_argument("--deny", action="store_true", help="press Cancel on the consent page")
    p.add_argument("--profile-dir")
    p.add_argument("--device", action="store_true", help="approve a device code (RFC 8628) on DOT's pages")
    args = p.parse_args()
    with open(args.password_file) as f:
        password = f.read().rstrip("\n")

    profile = args.profile_dir or tempfile.mkdtemp(prefix="sv-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 "--no-first-run", "--no-default-browser-check", f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        driver.set_page_load_timeout(60)
        wait = WebDriverWait(driver, 60)
        driver.get(args.url)
        wait.until(EC.presence_of_element_located((By.ID, "login")))
        driver.find_element(By.NAME, "username").send_keys(args.username)
        driver.find_element(By.NAME, "password").send_keys(password)
        driver.find_element(By.ID, "signin").click()
        if args.device:
            wait.until(EC.presence_of_element_located((By.NAME, "user_code")))
            driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
            decision = "deny" if args.deny else "accept"
            wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, f"button[name=action][value={decision}]")))
            driver.find_element(By.CSS_SELECTOR, f"button[name=action][value={decision}]").click()
            wait.until(lambda d: "/o/device-grant-status/" in d.current_url)
            wait.until(lambda d: d.execute_script("return document.readyState") == "complete")
            print(json.dumps({"final_url": driver.current_url, "body": driver.find_element(By.TAG_NAME, "body").text}), flush=True)
            return 0
        wait.until(EC.presence_of_element_located((By.ID, "authorizationForm")))
        if args.deny:
            driver.find_element(By.CSS_SELECTOR, "input[type=submit]:not([name=allow])").click()
        else:
            driver.find_element(By.NAME, "allow").click()
        wait.until(lambda d: d.current_url.startswith(("http://127.0.0.1", "http://localhost")) and "/o/" not in d.current_url
                   and "/accounts/" not in d.current_url)
        wait.until(lambda d: d.execute_script("return document.readyState") == "complete")
        print(json.dumps({"final_url": driver.current_url, "body": driver.find_element(By.TAG_NAME, "body").text}), flush=True)
    finally:
        driver.quit()


if __name__ == "__main__":
    sys.exit(main())
