#!/usr/bin/env python3
"""End to end: the desktop app downloads a catalog model and opens it.

fake-hub.py serves the bundled demo GGUF under a catalog entry's repo and
file name; `radixchat --get-model ID` (under xvfb-run) opens Model > Get a
model..., downloads it from HF_ENDPOINT, checks its SHA-256 and loads it.
Passes when the installed file is byte-identical to the served one, no
.part is left, the app saved it as the model in use, and the screenshot of
the window exists. Prints "[  SKIPPED ]" without xvfb-run.

usage: app-download-check.py RADIXCHAT_EXE SOURCE_DIR OUT_DIR
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

exe, src, out = sys.argv[1:4]
if not shutil.which("xvfb-run"):
    print("[  SKIPPED ] xvfb-run is not installed")
    sys.exit(0)

ENTRY = "qwen2.5-0.5b-instruct-q4_k_m"
catalog = json.load(open(os.path.join(src, "assets/model-catalog.json")))
model = next(m for m in catalog["models"] if m["id"] == ENTRY)
blob = os.path.join(src, "assets/model/radixchat-demo.gguf")
data = open(blob, "rb").read()

work = tempfile.mkdtemp(prefix="rc-get-model-")
cfg = os.path.join(work, "hub.json")
json.dump({"files": [{"repo": model["repo"], "file": model["file"], "blob": blob,
                      "sha256": hashlib.sha256(data).hexdigest()}],
           "log": os.path.join(work, "requests.log")}, open(cfg, "w"))
hub = subprocess.Popen([sys.executable, os.path.join(src, "tests/app/gui/fake-hub.py"), cfg],
                       stdout=subprocess.PIPE, text=True)
try:
    port = int(hub.stdout.readline().split()[1])
    runtime = os.path.join(work, "runtime")
    os.mkdir(runtime, 0o700)
    env = dict(os.environ, HF_ENDPOINT="http://127.0.0.1:%d" % port, XDG_RUNTIME_DIR=runtime)
    env.pop("QT_QPA_PLATFORM", None)
    shot = os.path.join(out, "get-model-window.png")
    data_dir = os.path.join(work, "data")
    r = subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 1280x800x24", exe, "--data-dir", data_dir,
                        "--get-model", ENTRY, "--screenshot", shot, "--quit-after-reply"],
                       env=env, timeout=240, capture_output=True, text=True)
    print(r.stdout[-2000:], r.stderr[-2000:])
    assert r.returncode == 0, "radixchat exited with %d" % r.returncode
    installed = os.path.join(data_dir, "models", model["file"])
    assert open(installed, "rb").read() == data, "the installed file differs from the served one"
    assert not os.path.exists(installed + ".part"), ".part left behind"
    settings = open(os.path.join(data_dir, "settings.ini")).read()
    assert "path=" + installed in settings, "the app did not keep the download as its model:\n" + settings
    assert os.path.getsize(shot) > 0
    print("ok:", installed)
finally:
    hub.kill()
    hub.wait()
    shutil.rmtree(work, ignore_errors=True)
