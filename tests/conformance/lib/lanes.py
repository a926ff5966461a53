"""How each lane's CLI is pointed at a loopback fake provider.

One `Lane` per first-party spawn lane, plus the gemini example overlay. `configure` writes the CLI's own config files
into a throw-away HOME and returns the environment variables that send the CLI to
the provider on 127.0.0.1 and switch off its telemetry, update checks and other
non-essential traffic. Everything here was read from the installed packages'
source and docs (see README.md in this folder for the per-CLI notes).
"""

import json
import os
import sys
from dataclasses import dataclass, field

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "replay"))
from replay_common import provider_var  # noqa: E402
from shape import coderabbit_prompt_only  # noqa: E402

# The model every provider reports; `--model` scenarios ask for OVERRIDE instead and
# the suite checks that OVERRIDE reached the provider.
DEFAULT_MODEL = "conformance-model"
OVERRIDE = "override-model"

# Effort levels gsd-lane's config accepts (invocation.md §3.5).
EFFORT_LEVELS = ["minimal", "low", "medium", "high", "xhigh", "max"]


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def common_env():
    """Switches every CLI honours or ignores harmlessly."""
    return {
        "NO_UPDATE_NOTIFIER": "1",
        "DO_NOT_TRACK": "1",
        "CI": "",
        "TERM": os.environ.get("TERM", "xterm-256color") or "xterm-256color",
    }


def gemini(home, url, _project):
    write(
        f"{home}/.gemini/settings.json",
        json.dumps(
            {
                # With GOOGLE_GEMINI_BASE_URL set, gemini-cli 0.61 derives the auth type
                # "gateway" from the environment, which its non-interactive validation
                # rejects ("Invalid auth method selected.", exit 41); naming the API-key
                # type in the settings keeps the base URL and passes validation.
                "security": {"auth": {"selectedType": "gemini-api-key"}},
                "telemetry": {"enabled": False},
                "privacy": {"usageStatisticsEnabled": False},
                "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
            }
        ),
    )
    # gemini is a third-party lane now (the example overlay examples/lanes/gemini): it starts
    # from gsd-lane's minimal environment, so its key and base URL go where a user puts them
    # for it, gemini-cli's own ~/.gemini/.env, which it loads at start.
    variables = {"GEMINI_API_KEY": "conformance-key", "GOOGLE_GEMINI_BASE_URL": url}
    write(f"{home}/.gemini/.env", "".join(f"{k}={v}\n" for k, v in variables.items()))
    return variables


def gemini_trust(home, folder):
    """The separate "trusted" scenario: the user trusted the folder in gemini."""
    write(f"{home}/.gemini/trustedFolders.json", json.dumps({folder: "TRUST_FOLDER"}))


def claude(_home, url, _project):
    return {
        "ANTHROPIC_BASE_URL": url,
        "ANTHROPIC_API_KEY": "conformance-key",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }


def codex(home, url, _project):
    write(
        f"{home}/.codex/config.toml",
        f"""model = "{DEFAULT_MODEL}"
model_provider = "conformance"
check_for_update_on_startup = false

[model_providers.conformance]
name = "Conformance fake"
base_url = "{url}/v1"
wire_api = "responses"
env_key = "CONFORMANCE_API_KEY"

[analytics]
enabled = false
""",
    )
    return {"CONFORMANCE_API_KEY": "conformance-key"}


def opencode(home, url, _project):
    models = {m: {"name": m} for m in (DEFAULT_MODEL, OVERRIDE)}
    write(
        f"{home}/.config/opencode/opencode.json",
        json.dumps(
            {
                "$schema": "https://opencode.ai/config.json",
                "autoupdate": False,
                "share": "disabled",
                "model": f"conformance/{DEFAULT_MODEL}",
                "provider": {
                    "conformance": {
                        "npm": "@ai-sdk/openai-compatible",
                        "name": "Conformance fake",
                        "options": {"baseURL": f"{url}/v1", "apiKey": "conformance-key"},
                        "models": models,
                    }
                },
            }
        ),
    )
    return {
        "OPENCODE_DISABLE_AUTOUPDATE": "1",
        "OPENCODE_DISABLE_MODELS_FETCH": "1",
        "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
        "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
        "OPENCODE_DISABLE_SHARE": "1",
        "OPENCODE_DISABLE_CLAUDE_CODE": "1",
    }


def qwen(home, url, _project):
    write(
        f"{home}/.qwen/settings.json",
        json.dumps(
            {
                "security": {"auth": {"selectedType": "openai"}},
                "telemetry": {"enabled": False},
                "privacy": {"usageStatisticsEnabled": False},
                "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
            }
        ),
    )
    return {
        "OPENAI_BASE_URL": f"{url}/v1",
        "OPENAI_API_KEY": "conformance-key",
        "OPENAI_MODEL": DEFAULT_MODEL,
    }


def kimi(home, url, _project):
    # Kimi Code 2.x reads ~/.kimi-code/config.toml; `-m` takes a model ALIAS from it,
    # so the override scenario asks for the alias that maps to OVERRIDE.
    write(
        f"{home}/.kimi-code/config.toml",
        f"""default_model = "conformance-default"

[providers.conformance]
type = "kimi"
base_url = "{url}/v1"
api_key = "conformance-key"

[models.conformance-default]
provider = "conformance"
model = "{DEFAULT_MODEL}"
max_context_size = 131072

[models.conformance-override]
provider = "conformance"
model = "{OVERRIDE}"
max_context_size = 131072
""",
    )
    return {"KIMI_CODE_NO_AUTO_UPDATE": "1"}


def kimi_legacy(home, url, _project):
    # kimi-cli 1.x reads ~/.kimi/config.toml (providers / models / default_model, the
    # shape Kimi Code inherited).
    write(
        f"{home}/.kimi/config.toml",
        f"""default_model = "conformance-default"

[providers.conformance]
type = "kimi"
base_url = "{url}/v1"
api_key = "conformance-key"

[models.conformance-default]
provider = "conformance"
model = "{DEFAULT_MODEL}"
max_context_size = 131072
""",
    )
    return {"KIMI_DISABLE_TELEMETRY": "1"}


def replay(binary):
    """Configuration of a replay CLI: the variable naming its provider."""

    def configure(_home, url, _project):
        return {provider_var(binary): url}

    return configure


@dataclass
class Lane:
    """One first-party lane as the suite drives it."""

    slug: str
    tool: str  # name in pins.txt ("replay" for the replay CLIs)
    binary: str
    configure: object
    model_arg: str = ""  # value passed to `gsd-lane run --model` ("" = lane takes none)
    effort: bool = False  # effortChannel argv: every level is tried
    file_ref: bool = False  # prompt reaches the CLI as a path, not as text
    gets_prompt: bool = True  # False: promptChannel none (coderabbit reviews the diff)
    flag: str = ""
    scenarios: list = field(default_factory=list)  # extra scenarios beyond the common ones
    # Effort level (after gsd-lane's clamp) the provider must see in an "effort" field of
    # the request body; None = the CLI sends nothing checkable for this provider.
    effort_wire: object = None
    # What the review file must hold, given the provider's answer (replays with an
    # output shape of their own); None = the answer itself.
    shape: object = None
    # Name in the table and on the command line when it differs from the slug (the
    # legacy kimi-cli is a second CLI for the kimi-code lane).
    name: str = ""
    # A pattern over "<reason>: <detail>": being unavailable for a reason that matches
    # also passes -- the lane told the user, before running anything, why it cannot
    # run and what to do (gemini in an untrusted folder, issue 10 point 2; the legacy
    # kimi-cli told apart from Kimi Code, point 3). None: the lane must run.
    unavailable_ok: str = None
    in_review: bool = True  # part of the multi-lane review scenario
    # An example overlay (repository-relative folder) installed with `gsd-lane install`
    # before the lane runs: the lane is not first-party (gemini, retired upstream by #4716,
    # is proven as one third-party data-only lane on its real CLI).
    overlay: str = ""
    # The model narrates, calls the CLI's `read` tool on the plan file, then answers (scenario
    # `narrated`, and this lane's provider in the multi-lane review): the review must be the
    # answer alone (issue 21 item 4). For CLIs that speak chat completions with tools.
    narrates: bool = False
    # The vendor's new name of the lane's program (Cursor renames cursor-agent to agent): the
    # scenario `renamed` runs the lane with only that name on PATH (replay/renamed/).
    renamed: str = ""

    @property
    def label(self):
        return self.name or self.slug


LANES = [
    Lane("gemini", "gemini", "gemini", gemini, model_arg=OVERRIDE, flag="--gemini",
         scenarios=["trusted"], overlay="examples/lanes/gemini",
         unavailable_ok=r"^untrusted_workspace: .*GEMINI_CLI_TRUST_WORKSPACE"),
    # claude-code sends the level as output_config.effort; codex as reasoning.effort. Both
    # clamp `minimal` to `low`, and codex passes `max` as it is (upstream #4275).
    Lane("claude", "claude", "claude", claude, model_arg=OVERRIDE, effort=True, flag="--claude",
         effort_wire=lambda level: "low" if level == "minimal" else level),
    Lane("codex", "codex", "codex", codex, model_arg=OVERRIDE, effort=True, flag="--codex",
         effort_wire=lambda level: "low" if level == "minimal" else level),
    # opencode accepts --variant for every level, but a custom openai-compatible model
    # without declared variants sends no reasoning field, so only acceptance is checked.
    Lane("opencode", "opencode", "opencode", opencode, model_arg=f"conformance/{OVERRIDE}",
         effort=True, flag="--opencode", narrates=True),
    Lane("qwen", "qwen", "qwen", qwen, model_arg=OVERRIDE, flag="--qwen"),
    Lane("kimi-code", "kimi-code", "kimi", kimi, model_arg="conformance-override",
         file_ref=True, flag="--kimi-code"),
    # The legacy Python kimi-cli installs the same `kimi` program name.
    Lane("kimi-code", "kimi-cli", "kimi", kimi_legacy, file_ref=True, name="kimi-cli",
         unavailable_ok=r"kimi-cli|legacy|Kimi Code", in_review=False),
    Lane("cursor", "replay", "cursor-agent", replay("cursor-agent"), file_ref=True, flag="--cursor",
         renamed="agent"),
    Lane("coderabbit", "replay", "coderabbit", replay("coderabbit"), flag="--coderabbit",
         shape=coderabbit_prompt_only, gets_prompt=False),
    Lane("antigravity", "replay", "agy", replay("agy"), model_arg=OVERRIDE, file_ref=True,
         flag="--antigravity", scenarios=["transcript"]),
]
