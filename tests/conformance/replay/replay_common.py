"""Shared plumbing of the replay CLIs: ask the suite's fake provider for the answer.

A replay CLI stands in for a real CLI that cannot be installed here. It reproduces
the real CLI's documented flags, output shape and exit codes, and gets its "model"
answer from the loopback fake provider named by CONFORMANCE_REPLAY_URL (OpenAI chat
completions, non-streaming; CONFORMANCE_REPLAY_URL_<PROGRAM>, e.g.
..._CURSOR_AGENT), sending the argv prompt and the contents of the prompt
file it names, so the suite can check the plan reached the provider.
"""

import json
import os
import re
import sys
import urllib.request

FILE_REF = re.compile(r"Read the file at (\S+) in full")


def provider_var(program):
    """The environment variable naming the provider of one replay CLI."""
    return "CONFORMANCE_REPLAY_URL_" + re.sub(r"[^A-Z0-9]", "_", program.upper())


def prompt_text(argv_prompt):
    """The argv prompt plus the contents of the file a file-ref prompt names."""
    text = argv_prompt
    match = FILE_REF.search(argv_prompt)
    if match:
        try:
            with open(match.group(1), encoding="utf-8", errors="replace") as f:
                text += "\n\n" + f.read()
        except OSError as err:
            text += f"\n\n(could not read {match.group(1)}: {err})"
    return text


def ask(prompt, model="replay-model"):
    """POST the prompt to the fake provider; return the answer text (exit 1 on failure)."""
    var = provider_var(os.path.basename(sys.argv[0]))
    base = os.environ.get(var)
    if not base:
        die(f"not authenticated: no provider configured ({var})")
    body = json.dumps({"model": model,
                       "messages": [{"role": "user", "content": prompt}]}).encode()
    req = urllib.request.Request(base + "/v1/chat/completions", data=body,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            data = json.load(resp)
    except Exception as err:  # noqa: BLE001 - any transport failure is the CLI's error exit
        die(f"request failed: {err}")
    return data["choices"][0]["message"]["content"]


def die(message, code=1):
    print(f"error: {message}", file=sys.stderr)
    sys.exit(code)
