"""A crawler's loop against `neardup serve`: for each fetched page, ask the
service whether something near it was seen, and add it when not (/v1/check).

The service runs on the loopback interface (127.0.0.1) with a fresh index;
the "fetched pages" are the lines of news.jsonl.

    python3 examples/crawler.py [WORK_DIR]
"""

import json
import pathlib
import re
import subprocess
import sys
import tempfile
import urllib.request

NEARDUP = "neardup"
here = pathlib.Path(__file__).resolve().parent
work = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp())
work.mkdir(parents=True, exist_ok=True)

# An empty index (the default method), then the service on a free port.
(work / "empty.jsonl").write_text("")
index = work / "seen.idx"
subprocess.run([NEARDUP, "index", "build", str(work / "empty.jsonl"), "-o", str(index), "-q"],
               check=True)
log = open(work / "serve.log", "w")  # the service's access log
server = subprocess.Popen([NEARDUP, "serve", "--index", str(index), "--port", "0"],
                          stdout=subprocess.PIPE, stderr=log, text=True)
try:
    line = server.stdout.readline()  # "neardup: serving IDX on http://127.0.0.1:PORT"
    base = re.search(r"http://127\.0\.0\.1:\d+", line).group(0)

    def check(page_id, text):
        body = json.dumps({"documents": [{"id": page_id, "text": text}]}).encode()
        request = urllib.request.Request(base + "/v1/check", data=body,
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request) as response:
            return json.load(response)["results"][0]

    for line in open(here / "news.jsonl", encoding="utf-8"):
        page = json.loads(line)
        result = check(page["source"] + "/" + page["id"], page["text"])
        if result["added"]:
            print(f"new      {page['id']}: indexed")
        else:
            seen = result["matches"][0]
            print(f"skipped  {page['id']}: near {seen['id']} (distance {seen['distance']})")
finally:
    server.terminate()
    server.wait()
    log.close()
