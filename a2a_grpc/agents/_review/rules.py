"""Which ruff rules the code-review agent runs, how severe they are, and the fix hints it gives.

A review *focus* selects ruff rule families: ``security`` → ``S`` (flake8-bandit), ``bugs`` → ``B``
(flake8-bugbear), ``F`` (Pyflakes), ``PLE`` (Pylint errors), ``style`` → ``E``, ``W`` (pycodestyle),
``N`` (pep8-naming), ``UP`` (pyupgrade), ``performance`` → ``PERF`` (Perflint). Severity follows the
family (security high, bugs medium, style and performance low) with a few per-rule exceptions.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

__all__ = [
    "ALL_FOCUS",
    "CONTEXT_DEPENDENT_RULES",
    "FOCUS_FAMILIES",
    "LOOP_RULES",
    "SYNTAX_ERROR_CODE",
    "families_for",
    "family_of",
    "focus_of",
    "recommendation_for",
    "severity_of",
]

#: Review focus → ruff rule families (prefixes passed to ``ruff check --select``).
FOCUS_FAMILIES: Final[dict[str, tuple[str, ...]]] = {
    "security": ("S",),
    "bugs": ("B", "F", "PLE"),
    "style": ("E", "W", "N", "UP"),
    "performance": ("PERF",),
}
ALL_FOCUS: Final[tuple[str, ...]] = tuple(FOCUS_FAMILIES)

_FAMILY_FOCUS: Final[dict[str, str]] = {fam: focus for focus, fams in FOCUS_FAMILIES.items() for fam in fams}
_FOCUS_SEVERITY: Final[dict[str, str]] = {
    "security": "high",
    "bugs": "medium",
    "style": "low",
    "performance": "low",
}
#: Rules whose family severity would mislead.
_RULE_SEVERITY: Final[dict[str, str]] = {
    "S101": "low",  # assert: normal in tests, only a risk when used for runtime checks
}

#: ruff's code for a file it cannot parse.
SYNTAX_ERROR_CODE: Final = "invalid-syntax"

#: Rules that judge a name or statement by code the diff does not show (the rest of the module, the
#: enclosing function or loop). When only hunks of a file are known they would report the
#: reconstruction, not the change (an import used further down looks unused, a ``return`` whose
#: ``def`` is outside the hunk looks misplaced), so they are only reported for files the diff adds
#: in full.
CONTEXT_DEPENDENT_RULES: Final[frozenset[str]] = frozenset(
    {
        "F401",  # unused import: the use may be outside the hunks
        "F405",  # name may come from a star import: it may be defined outside the hunks
        "F811",  # redefinition of unused name
        "F821",  # undefined name: defined outside the hunks
        "F822",  # undefined name in __all__
        "F823",  # local variable referenced before assignment
        "F841",  # unused local variable: used after the hunk
        "F842",  # annotated but unused local
        "F701",  # break outside loop: the loop header is outside the hunk
        "F702",  # continue outside loop
        "F704",  # yield outside function
        "F706",  # return outside function
        "PLE0116",  # continue in finally
        "PLE0117",  # nonlocal without binding
        "PLE0118",  # name used before global declaration
        "PLE1142",  # await outside async function
        "PLE1520",  # singledispatchmethod on a function: the class header is outside the hunk
        "PLE0704",  # bare raise outside an except block: the except header is outside the hunk
        "B018",  # useless expression: a hunk may start with the tail of a statement
        "N807",  # dunder-named function: a method whose class header is outside the hunk looks like one
        "N999",  # invalid module name: the temporary file's name is not the module's
    }
)

#: Rules that judge a whole ``for`` loop body; in a hunk they are only reported when the loop
#: visibly ends within it (its body may continue below the hunk and use the variable, or do more
#: than the one ``append`` the hunk shows).
LOOP_RULES: Final[frozenset[str]] = frozenset({"B007", "PERF102", "PERF401", "PERF402", "PERF403"})

# Short fix hints for common rules; anything else gets ruff's own fix title or the family hint.
_RECOMMENDATIONS: Final[dict[str, str]] = {
    "S101": "Do not use assert for runtime checks (it is removed under python -O); raise an exception.",
    "S102": "Avoid exec(); dispatch to explicit code paths instead of executing strings.",
    "S104": "Bind to a specific interface (e.g. 127.0.0.1) unless listening on all of them is intended.",
    "S105": "Do not hard-code passwords; read them from the environment or a secret store.",
    "S106": "Do not hard-code passwords; read them from the environment or a secret store.",
    "S107": "Do not hard-code default passwords; require the caller to supply them.",
    "S108": "Use tempfile.mkstemp()/TemporaryDirectory() instead of a fixed path in /tmp.",
    "S110": "Log or handle the exception instead of silently passing.",
    "S113": "Pass an explicit timeout= so the request cannot hang forever.",
    "S301": "Never unpickle untrusted data; use JSON or another data-only format.",
    "S307": "Avoid eval(); use ast.literal_eval() for literals or parse the input explicitly.",
    "S311": "Use the secrets module for security-sensitive random values.",
    "S324": "Use SHA-256 or stronger, or pass usedforsecurity=False for non-security hashing.",
    "S501": "Keep TLS certificate verification on (verify=True).",
    "S506": "Use yaml.safe_load() instead of yaml.load().",
    "S602": "Pass the command as an argument list with shell=False.",
    "S604": "Pass the command as an argument list with shell=False.",
    "S605": "Use subprocess.run([...]) with an argument list instead of a shell command string.",
    "S608": "Use a parameterized query (e.g. cursor.execute(sql, params)) instead of building SQL from strings.",
    "B006": "Use None as the default and create the mutable value inside the function.",
    "B007": "Rename the unused loop variable to _ (or _name).",
    "B008": "Do not call functions in argument defaults; compute the value inside the function.",
    "B904": "Use `raise ... from err` (or `from None`) inside except blocks to keep the cause.",
    "B905": "Pass strict=True (or strict=False explicitly) to zip().",
    "F401": "Remove the unused import, or re-export it via __all__.",
    "F541": "Remove the f prefix from the string that has no placeholders.",
    "F811": "Remove or rename the redefinition.",
    "F821": "Define or import the name before using it.",
    "F841": "Remove the unused variable or use it.",
    "E711": "Compare to None with `is` / `is not`.",
    "E712": "Use the truth value directly (`if x:` / `if not x:`) instead of comparing to True/False.",
    "E721": "Use isinstance() (or `is`) to compare types.",
    "E722": "Catch specific exceptions instead of a bare except.",
    "E731": "Use a def instead of assigning a lambda.",
    "E741": "Use a descriptive name instead of l, O or I.",
    "E501": "Wrap the line to the configured length.",
    "W291": "Remove the trailing whitespace.",
    "W293": "Remove the whitespace on the blank line.",
    "W292": "End the file with a newline.",
    "UP031": "Use an f-string or str.format() instead of %-formatting.",
    "UP032": "Use an f-string instead of str.format().",
    "PERF401": "Build the list with a comprehension instead of append() in a loop.",
    "PERF203": "Move the try/except out of the loop body.",
}
_FAMILY_HINTS: Final[dict[str, str]] = {
    "security": "Review the code for exploitability and apply the safer pattern described in the rule's documentation.",
    "bugs": "Fix the likely bug described by the rule.",
    "style": "Apply the style fix described by the rule (ruff --fix can often do it).",
    "performance": "Apply the faster idiom described by the rule.",
}

_LETTERS = re.compile(r"[A-Z]+")


def family_of(code: str) -> str:
    """The rule family of a ruff code: its leading letters (``S608`` → ``S``, ``PLE0101`` → ``PLE``)."""
    m = _LETTERS.match(code)
    return m.group(0) if m else code


def focus_of(code: str) -> str:
    """The review focus a ruff code belongs to; syntax errors count as ``bugs``."""
    return _FAMILY_FOCUS.get(family_of(code), "bugs")


def severity_of(code: str) -> str:
    """``high``, ``medium`` or ``low`` for a ruff code (by family, with per-rule exceptions)."""
    if code == SYNTAX_ERROR_CODE:
        return "high"
    return _RULE_SEVERITY.get(code) or _FOCUS_SEVERITY[focus_of(code)]


def families_for(focus: Iterable[str]) -> list[str]:
    """The ruff families to ``--select`` for the given focus values (assumed valid)."""
    return [fam for f in ALL_FOCUS if f in set(focus) for fam in FOCUS_FAMILIES[f]]


def recommendation_for(code: str, fix_title: str | None = None) -> str:
    """A short fix hint: the table entry for common rules, else ruff's fix title, else the family hint."""
    if code == SYNTAX_ERROR_CODE:
        return "Fix the syntax error; nothing else in this file could be checked."
    hint = _RECOMMENDATIONS.get(code)
    if hint:
        return hint
    if fix_title:
        return fix_title.rstrip(".") + "."
    return _FAMILY_HINTS[focus_of(code)]
