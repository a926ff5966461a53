"""Output shapes of replayed CLIs, shared by the replay scripts and the suite's checks."""

RULE = "=" * 76


def coderabbit_prompt_only(answer):
    """`coderabbit review --prompt-only`: one finding block per finding."""
    return (f"{RULE}\nFile: src/ledger.py\nLine: 1 to 1\nType: potential_issue\n\n"
            f"Prompt for AI Agent:\n{answer}\n\n\n\nReview completed ✔\n")
