#!/usr/bin/env python3
"""The backward page (viz/page.h) in a real browser: headless Chromium through WebDriver.

Runs the tour with --html, steps through the whole backward pass on the page, and checks that every op
ran once, in the engine's order (mean, relu, matmul); that the gradient the page shows for the leaf w and
for z (matmul's output) are the ones the program printed; then does the same over used_twice's page,
where two gradients meet at matmul's output and at w: the page must show g1 + g2 = total with the
engine's total; and over a Transformer layer's page, where each module call is a box: the layer's one
box opens on a click into its modules' boxes, and every step highlights one box (the op, or the closed
module it runs in). Screenshots of the three pages go into --out (docs/images/ has two of them).

  test_page.py --tour EXE --used-twice EXE --encoder-layer EXE --out DIR

Where Chromium, its driver or Selenium is missing (Debian: chromium chromium-driver python3-selenium;
scripts/test.sh installs them), it says which and exits 77, which CTest reports as skipped.
"""
import argparse
import pathlib
import re
import shutil
import subprocess
import sys

SKIPPED = 77
NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")


def numbers(text):
    return [float(x) for x in NUMBER.findall(text)]


def printed_tensor(stdout, name):
    """The entries of `name = tensor([...], shape=...)` in a program's output."""
    match = re.search(re.escape(name) + r" = tensor\((.*?)\], shape", stdout, re.S)
    assert match, f"{name} not found in the program's output:\n{stdout}"
    return numbers(match.group(1) + "]")


def close(a, b, what, tolerance=1e-4):
    """The program prints 4 decimals; the page shows 6 significant digits."""
    assert len(a) == len(b) and all(abs(x - y) <= tolerance for x, y in zip(a, b)), \
        f"{what}: the page shows {a}, the program printed {b}"
    print(f"ok: {what} = {a}")


def browser():
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        return None, "Selenium is missing (apt-get install python3-selenium)"
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver") or (pathlib.Path("/usr/bin/chromedriver").exists() and "/usr/bin/chromedriver")
    if not chromium or not driver:
        return None, "Chromium or its WebDriver is missing (apt-get install chromium chromium-driver)"
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    # Root in a container: no sandbox; no GPU; /dev/shm may be small.
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,800"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(driver), options=options), None


def run_program(command, out):
    return subprocess.run(command, cwd=out, capture_output=True, text=True, check=True).stdout


def step_through(driver):
    """Clicks step until the pass is over; returns the op that ran at each step."""
    from selenium.webdriver.common.by import By
    status = driver.find_element(By.ID, "status")
    total = int(status.get_attribute("data-steps"))
    ran = []
    for k in range(1, total + 1):
        driver.find_element(By.ID, "step").click()
        status = driver.find_element(By.ID, "status")
        assert int(status.get_attribute("data-step")) == k
        running = driver.find_elements(By.CSS_SELECTOR, "g.box.running")
        assert len(running) == 1, f"step {k}: {len(running)} boxes highlighted"
        ran.append(running[0].get_attribute("data-name"))
    return ran


def check_tour(driver, exe, out):
    from selenium.webdriver.common.by import By
    page = out / "tour.html"
    stdout = run_program([exe, "--html", str(page)], out)
    driver.get(page.as_uri())
    assert "Graphviz" in driver.find_element(By.ID, "layout").text or "own" in driver.find_element(By.ID, "layout").text
    print("layout:", driver.find_element(By.ID, "layout").text)
    ran = step_through(driver)
    assert ran == ["mean", "relu", "matmul"], f"the page ran {ran}, the engine runs mean, relu, matmul"
    print("ok: every op ran once, in the engine's order:", ran)
    w = driver.find_element(By.CSS_SELECTOR, '#leaves tr[data-leaf="w"] .total').text
    close(numbers(w), printed_tensor(stdout, "w.grad()"), "w.grad")
    driver.find_element(By.CSS_SELECTOR, 'g.box[data-name="matmul"]').click()
    z = driver.find_element(By.CSS_SELECTOR, "#details .grad-output").text
    close(numbers(z), printed_tensor(stdout, "z.grad()"), "d loss / d z (matmul's output)")
    driver.find_element(By.ID, "reset").click()
    for _ in range(2):
        driver.find_element(By.ID, "step").click()
    driver.save_screenshot(str(out / "tour.png"))


def check_used_twice(driver, exe, out):
    from selenium.webdriver.common.by import By
    page = out / "used_twice.html"
    stdout = run_program([exe, "--html", str(page)], out)
    driver.get(page.as_uri())
    ran = step_through(driver)
    assert ran == ["sum", "add", "mul", "matmul"], ran
    # matmul ran last: the gradient it received is the sum of what the two factors of h·h sent.
    meeting = driver.find_element(By.CSS_SELECTOR, "#step-info .accumulation")
    terms = [numbers(t.text) for t in meeting.find_elements(By.CSS_SELECTOR, ".term")]
    total = numbers(meeting.find_element(By.CSS_SELECTOR, ".total").text)
    assert len(terms) == 2, terms
    close(total, [a + b for a, b in zip(*terms)], "at matmul's output, g1 + g2")
    row = driver.find_element(By.CSS_SELECTOR, '#leaves tr[data-leaf="w"] .grad-sum')
    terms = [numbers(t.text) for t in row.find_elements(By.CSS_SELECTOR, ".term")]
    total = numbers(row.find_element(By.CSS_SELECTOR, ".total").text)
    assert len(terms) == 2, terms
    close(total, [a + b for a, b in zip(*terms)], "at the leaf w, g1 + g2")
    close(total, printed_tensor(stdout, "w.grad()"), "w.grad")
    driver.save_screenshot(str(out / "used_twice.png"))


def check_encoder_layer(driver, exe, out):
    from selenium.webdriver.common.by import By
    page = out / "encoder_layer.html"
    run_program([exe, str(page)], out)
    driver.get(page.as_uri())

    def boxes():
        return [b.get_attribute("data-name") for b in driver.find_elements(By.CSS_SELECTOR, "g.box")]

    assert "TransformerEncoderLayer" in boxes() and len(boxes()) < 6, f"the layer is not one closed box: {boxes()}"
    closed = len(boxes())
    driver.find_element(By.CSS_SELECTOR, 'g.box[data-name="TransformerEncoderLayer"]').click()
    opened = boxes()
    for module in ("self_attn (MultiheadAttention)", "norm1 (LayerNorm)", "linear1 (Linear)", "linear2 (Linear)"):
        assert module in opened, f"{module} not among the boxes after opening the layer: {opened}"
    print(f"ok: the layer's box ({closed} boxes) opens into its modules' ({len(opened)} boxes)")
    ran = step_through(driver)  # one highlighted box a step
    assert "self_attn (MultiheadAttention)" in ran and "linear1 (Linear)" in ran, ran
    print(f"ok: {len(ran)} steps, each highlighting one box")
    driver.find_element(By.ID, "reset").click()
    for _ in range(12):
        driver.find_element(By.ID, "step").click()
    driver.save_screenshot(str(out / "encoder_layer.png"))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tour", required=True)
    parser.add_argument("--used-twice", required=True)
    parser.add_argument("--encoder-layer", required=True)
    parser.add_argument("--out", required=True, type=pathlib.Path)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    driver, missing = browser()
    if driver is None:
        print(f"backward page test SKIPPED: {missing}")
        return SKIPPED
    try:
        check_tour(driver, args.tour, args.out.resolve())
        check_used_twice(driver, args.used_twice, args.out.resolve())
        check_encoder_layer(driver, args.encoder_layer, args.out.resolve())
    finally:
        driver.quit()
    print(f"the backward page works in Chromium; screenshots in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
