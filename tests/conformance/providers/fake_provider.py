#!/usr/bin/env python3
"""Loopback fake model provider for the conformance suite.

One process answers every API dialect the real CLIs speak, routed by path:

  OpenAI chat completions   POST .../chat/completions     (SSE when "stream": true, JSON otherwise)
  OpenAI Responses          POST .../responses            (SSE when "stream": true, JSON otherwise)
  Anthropic Messages        POST .../messages             (SSE when "stream": true, JSON otherwise)
                            POST .../messages/count_tokens
  Gemini                    POST .../models/<m>:generateContent
                            POST .../models/<m>:streamGenerateContent (SSE with ?alt=sse, JSON array otherwise)
                            POST .../models/<m>:countTokens
  model lists               GET  .../models

Every request (method, path, headers that are not secrets, body) is appended to the
log file as one JSON line, so the suite can check that text from the plan reached the
provider. Every generation request is answered with the fixed review text from
--review-file, so the review a CLI writes can be compared byte for byte.

With --narrate-then-read PATH (chat completions only; opencode's case, issue 21 item 4) the
provider plays a model that narrates, calls a tool, then answers: a request that offers a
`read` tool and carries no tool result yet is answered with the text NARRATION plus a streamed
`tool_calls` delta calling `read` on PATH (finish reason `tool_calls`); once a request carries
the tool's result (a `tool` role message) the answer is the review. The CLI, not the provider,
reads the file, so the request log proves the tool really ran.

Requests whose body asks for a JSON answer (a side call of the CLI, e.g. gemini-cli's
next-speaker check or a title generator) get a small JSON object instead, so the side
call does not fail in a way that changes the CLI's behaviour.

The server binds 127.0.0.1 on an ephemeral port and writes the port to --port-file
once it is listening. It exits after --lifetime seconds at the latest.
"""

import argparse
import json
import re
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAX_BODY = 64 * 1024 * 1024
SIDE_JSON = {
    "reasoning": "conformance fake provider",
    "next_speaker": "user",
    "model_choice": "flash",
    "isNewTopic": False,
    "title": "conformance",
    "complexity_reasoning": "conformance fake provider",
    "complexity_score": 1,
}


# What the narrating model says before its tool call; it must never reach the review.
NARRATION = "I will read the plan file first."


class Provider:
    """Shared state: the review text, the model name, the request log and the tool script."""

    def __init__(self, review, model, log_path, read_path=None):
        self.review = review
        self.model = model
        self.log_path = log_path
        self.read_path = read_path
        self.lock = threading.Lock()

    def record(self, entry):
        line = json.dumps(entry, ensure_ascii=False)
        with self.lock, open(self.log_path, "a", encoding="utf-8") as log:
            log.write(line + "\n")


def wants_json(body):
    """True when the request asks for a structured JSON answer rather than prose."""
    if not isinstance(body, dict):
        return False
    gen = body.get("generationConfig") or body.get("config") or {}
    if isinstance(gen, dict) and gen.get("responseMimeType") == "application/json":
        return True
    fmt = body.get("response_format")
    if isinstance(fmt, dict) and fmt.get("type") in ("json_object", "json_schema"):
        return True
    text = body.get("text")
    if isinstance(text, dict) and isinstance(text.get("format"), dict):
        return text["format"].get("type") == "json_schema"
    return False


def read_tool_argument(body):
    """The name of the path argument of the request's `read` tool, or None when it offers none.

    Taken from the tool's own JSON schema (`filePath` in opencode 1.18), so a CLI that renames
    the argument still gets a call it accepts.
    """
    tools = body.get("tools") if isinstance(body, dict) else None
    for tool in tools if isinstance(tools, list) else []:
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(function, dict) or function.get("name") != "read":
            continue
        schema = function.get("parameters") or {}
        props = schema.get("properties") if isinstance(schema, dict) else None
        props = props if isinstance(props, dict) else {}
        if "filePath" in props:
            return "filePath"
        required = schema.get("required") if isinstance(schema.get("required"), list) else []
        return next((r for r in required if isinstance(r, str)), "filePath")
    return None


def has_tool_result(body):
    """True when the conversation already carries a tool's result (role `tool`)."""
    messages = body.get("messages") if isinstance(body, dict) else None
    return isinstance(messages, list) and any(
        isinstance(m, dict) and m.get("role") == "tool" for m in messages)


def chunks(text, size=40):
    """Split text into pieces so streamed answers arrive in several deltas."""
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


class Handler(BaseHTTPRequestHandler):
    """Routes one request to its dialect."""

    protocol_version = "HTTP/1.1"
    server_version = "conformance-fake/1"

    def log_message(self, fmt, *args):  # quiet: the JSON log is the record
        pass

    @property
    def provider(self):
        return self.server.provider

    def read_body(self):
        length = int(self.headers.get("Content-Length") or 0)
        if length < 0 or length > MAX_BODY:
            raise ValueError("body too large")
        raw = self.rfile.read(length) if length else b""
        if self.headers.get("Content-Encoding") in ("gzip", "br", "deflate", "zstd"):
            import zlib

            if self.headers.get("Content-Encoding") == "gzip":
                raw = zlib.decompress(raw, 16 + zlib.MAX_WBITS)
            elif self.headers.get("Content-Encoding") == "deflate":
                raw = zlib.decompress(raw)
        return raw.decode("utf-8", "replace")

    def record(self, raw):
        headers = {
            k: v
            for k, v in self.headers.items()
            if k.lower() not in ("authorization", "x-api-key", "x-goog-api-key", "cookie")
        }
        self.provider.record(
            {"method": self.command, "path": self.path, "headers": headers, "body": raw}
        )

    # -- plumbing -------------------------------------------------------------------------
    def send_json(self, obj, status=200):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def start_sse(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def sse(self, data, event=None):
        out = ""
        if event:
            out += f"event: {event}\n"
        payload = data if isinstance(data, str) else json.dumps(data)
        out += f"data: {payload}\n\n"
        self.wfile.write(out.encode())
        self.wfile.flush()

    # -- routing --------------------------------------------------------------------------
    def do_GET(self):
        self.record("")
        path = self.path.split("?", 1)[0]
        if path.rstrip("/").endswith("/models"):
            model = self.provider.model
            self.send_json(
                {
                    "object": "list",
                    "data": [{"id": model, "object": "model", "owned_by": "conformance"}],
                    "models": [
                        {
                            "name": f"models/{model}",
                            "slug": model,
                            "supportedGenerationMethods": ["generateContent"],
                        }
                    ],
                }
            )
        else:
            self.send_json({"error": {"message": f"no route {path}"}}, 404)

    def do_HEAD(self):
        self.record("")
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self):
        try:
            raw = self.read_body()
        except Exception as err:  # noqa: BLE001 - any bad body is a 400
            self.send_json({"error": {"message": str(err)}}, 400)
            return
        self.record(raw)
        try:
            body = json.loads(raw) if raw else {}
        except json.JSONDecodeError:
            body = {}
        path = self.path.split("?", 1)[0]
        stream = isinstance(body, dict) and body.get("stream") is True
        text = json.dumps(SIDE_JSON) if wants_json(body) else self.provider.review
        gem = re.search(r"/models/([^/:]+):(\w+)$", path)
        if gem:
            self.gemini(gem.group(2), text, "alt=sse" in self.path)
        elif path.endswith("/messages/count_tokens"):
            self.send_json({"input_tokens": 100})
        elif path.endswith("/messages"):
            self.anthropic(stream, text)
        elif path.endswith("/responses"):
            self.openai_responses(stream, text)
        elif path.endswith("/chat/completions"):
            self.chat(stream, text, body)
        else:
            self.send_json({"error": {"message": f"no route {path}"}}, 404)

    # -- OpenAI chat completions -----------------------------------------------------------
    def chat(self, stream, text, body):
        cid = "chatcmpl-" + uuid.uuid4().hex
        created = int(time.time())
        usage = {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}
        model = self.provider.model
        argument = read_tool_argument(body) if self.provider.read_path else None
        if argument and stream and not has_tool_result(body):
            self.chat_tool_call(cid, created, model, argument, body)
            return
        if not stream:
            self.send_json(
                {
                    "id": cid,
                    "object": "chat.completion",
                    "created": created,
                    "model": model,
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": text},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": usage,
                }
            )
            return
        self.start_sse()

        def chunk(delta, finish=None, with_usage=False):
            obj = {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            if with_usage:
                obj["usage"] = usage
            return obj

        self.sse(chunk({"role": "assistant", "content": ""}))
        for piece in chunks(text):
            self.sse(chunk({"content": piece}))
        self.sse(chunk({}, "stop"))
        opts = body.get("stream_options") if isinstance(body, dict) else None
        if isinstance(opts, dict) and opts.get("include_usage"):
            self.sse({"id": cid, "object": "chat.completion.chunk", "created": created,
                      "model": model, "choices": [], "usage": usage})
        self.sse("[DONE]")

    def chat_tool_call(self, cid, created, model, argument, body):
        """Streams NARRATION, then a call of the `read` tool on the scripted path."""
        self.start_sse()

        def chunk(delta, finish=None):
            return {"id": cid, "object": "chat.completion.chunk", "created": created,
                    "model": model, "choices": [{"index": 0, "delta": delta,
                                                 "finish_reason": finish}]}

        self.sse(chunk({"role": "assistant", "content": ""}))
        for piece in chunks(NARRATION, 12):
            self.sse(chunk({"content": piece}))
        arguments = json.dumps({argument: self.provider.read_path})
        call = "call_" + uuid.uuid4().hex[:24]
        self.sse(chunk({"tool_calls": [{"index": 0, "id": call, "type": "function",
                                        "function": {"name": "read", "arguments": ""}}]}))
        for piece in chunks(arguments, 16):
            self.sse(chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}))
        self.sse(chunk({}, "tool_calls"))
        opts = body.get("stream_options")
        if isinstance(opts, dict) and opts.get("include_usage"):
            self.sse({"id": cid, "object": "chat.completion.chunk", "created": created,
                      "model": model, "choices": [],
                      "usage": {"prompt_tokens": 100, "completion_tokens": 10,
                                "total_tokens": 110}})
        self.sse("[DONE]")

    # -- OpenAI Responses ------------------------------------------------------------------
    def openai_responses(self, stream, text):
        rid = "resp_" + uuid.uuid4().hex
        mid = "msg_" + uuid.uuid4().hex
        model = self.provider.model
        usage = {
            "input_tokens": 100,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 20,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 120,
        }
        part = {"type": "output_text", "text": text, "annotations": []}
        item = {"type": "message", "id": mid, "status": "completed", "role": "assistant",
                "content": [part]}
        done = {"id": rid, "object": "response", "created_at": int(time.time()),
                "status": "completed", "model": model, "output": [item], "usage": usage}
        if not stream:
            self.send_json(done)
            return
        self.start_sse()
        base = dict(done, status="in_progress", output=[], usage=None)
        self.sse({"type": "response.created", "response": base}, "response.created")
        self.sse({"type": "response.in_progress", "response": base}, "response.in_progress")
        self.sse({"type": "response.output_item.added", "output_index": 0,
                  "item": dict(item, status="in_progress", content=[])},
                 "response.output_item.added")
        self.sse({"type": "response.content_part.added", "item_id": mid, "output_index": 0,
                  "content_index": 0, "part": dict(part, text="")},
                 "response.content_part.added")
        for piece in chunks(text):
            self.sse({"type": "response.output_text.delta", "item_id": mid, "output_index": 0,
                      "content_index": 0, "delta": piece}, "response.output_text.delta")
        self.sse({"type": "response.output_text.done", "item_id": mid, "output_index": 0,
                  "content_index": 0, "text": text}, "response.output_text.done")
        self.sse({"type": "response.content_part.done", "item_id": mid, "output_index": 0,
                  "content_index": 0, "part": part}, "response.content_part.done")
        self.sse({"type": "response.output_item.done", "output_index": 0, "item": item},
                 "response.output_item.done")
        self.sse({"type": "response.completed", "response": done}, "response.completed")

    # -- Anthropic Messages ----------------------------------------------------------------
    def anthropic(self, stream, text):
        mid = "msg_" + uuid.uuid4().hex
        model = self.provider.model
        if not stream:
            self.send_json({"id": mid, "type": "message", "role": "assistant", "model": model,
                            "content": [{"type": "text", "text": text}],
                            "stop_reason": "end_turn", "stop_sequence": None,
                            "usage": {"input_tokens": 100, "output_tokens": 20}})
            return
        self.start_sse()
        self.sse({"type": "message_start",
                  "message": {"id": mid, "type": "message", "role": "assistant", "model": model,
                              "content": [], "stop_reason": None, "stop_sequence": None,
                              "usage": {"input_tokens": 100, "output_tokens": 1}}},
                 "message_start")
        self.sse({"type": "content_block_start", "index": 0,
                  "content_block": {"type": "text", "text": ""}}, "content_block_start")
        self.sse({"type": "ping"}, "ping")
        for piece in chunks(text):
            self.sse({"type": "content_block_delta", "index": 0,
                      "delta": {"type": "text_delta", "text": piece}}, "content_block_delta")
        self.sse({"type": "content_block_stop", "index": 0}, "content_block_stop")
        self.sse({"type": "message_delta",
                  "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                  "usage": {"output_tokens": 20}}, "message_delta")
        self.sse({"type": "message_stop"}, "message_stop")

    # -- Gemini ----------------------------------------------------------------------------
    def gemini(self, method, text, alt_sse):
        if method == "countTokens":
            self.send_json({"totalTokens": 100})
            return
        if method not in ("generateContent", "streamGenerateContent"):
            self.send_json({"error": {"code": 404, "message": f"no method {method}"}}, 404)
            return

        def response(piece, last):
            obj = {"candidates": [{"content": {"role": "model", "parts": [{"text": piece}]},
                                   "index": 0}],
                   "modelVersion": self.provider.model}
            if last:
                obj["candidates"][0]["finishReason"] = "STOP"
                obj["usageMetadata"] = {"promptTokenCount": 100, "candidatesTokenCount": 20,
                                        "totalTokenCount": 120}
            return obj

        if method == "generateContent":
            self.send_json(response(text, True))
            return
        pieces = chunks(text)
        if alt_sse:
            self.start_sse()
            for i, piece in enumerate(pieces):
                self.sse(response(piece, i == len(pieces) - 1))
        else:
            self.send_json([response(p, i == len(pieces) - 1) for i, p in enumerate(pieces)])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--review-file", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--model", default="conformance-model")
    parser.add_argument("--lifetime", type=float, default=1800.0)
    parser.add_argument("--narrate-then-read", metavar="PATH",
                        help="narrate, call the `read` tool on PATH, then answer (chat only)")
    args = parser.parse_args()
    with open(args.review_file, encoding="utf-8") as f:
        review = f.read()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.provider = Provider(review, args.model, args.log, args.narrate_then_read)
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    import os

    os.replace(args.port_file + ".tmp", args.port_file)
    threading.Timer(args.lifetime, server.shutdown).start()
    try:
        server.serve_forever()
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
