"""The app in the students' language: English (the source text) and Brazilian Portuguese.

Translations are GNU gettext catalogues, ``sandbox/locale/<language>/LC_MESSAGES/*.po``, read by the small
pure-Python reader below (so nothing has to be compiled at build time; every ``.po`` file of a language is
merged into one catalogue, which lets each part of the app keep its own file). The source text is the
message id: an untranslated message shows in English, never as a key.

Use ``_("text")`` where a string is shown, at the moment it is shown, so that switching the language
(``set_language``) changes every label on the next frame without a restart. Text kept in module-level
tables is marked with ``N_("text")`` (which returns it unchanged, for the catalogue check) and passed
through ``_()`` when drawn. Formatted messages translate the pattern, then fill it:
``_("{n} bodies").format(n=n)``.

Text made once and shown later (an error message, a lesson check's verdict, a label computed by lesson
code) is made with ``N_("pattern {x:.2f}", x=x)``: that returns a ``Message``, a ``str`` holding the
English text, which keeps its pattern and values so that ``_()`` can write it again in whatever language
is current when it is shown. Its values may be ``Message`` objects themselves (translated in turn), and
``join`` joins messages without losing that.

The language at start-up is, in order: ``set_language`` (the panel's Language box or ``--lang``), the
``SANDBOX_LANG`` environment variable, then the system locale (``LANGUAGE``, ``LC_ALL``, ``LC_MESSAGES``,
``LANG``); anything that is not Portuguese falls back to English.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

LOCALE_DIR = Path(__file__).parent / "locale"
SOURCE_LANGUAGE = "en"
LANGUAGES = {"en": "English", "pt_BR": "Português (Brasil)"}
"""Language code → its name in that language (what the Language box lists)."""

_catalogues: dict[str, dict[str, str]] = {}
_current: str | None = None

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "a": "\a", "b": "\b", "f": "\f",
            "v": "\v"}
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')


def _unquote(text: str) -> str:
    """The value of one C-style quoted .po string literal (``"..."``), its escapes (``\\n``, ``\\t``,
    ``\\"``, ``\\\\``, ...) resolved, as GNU gettext writes them."""
    match = _QUOTED.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"expected one quoted string, got {text.strip()!r}")

    def unescape(m: re.Match) -> str:
        code = m.group(1)
        if code in _ESCAPES:
            return _ESCAPES[code]
        raise ValueError(f"unknown escape \\{code}")

    return re.sub(r"\\(.)", unescape, match.group(1))


def read_po(path: str | Path) -> dict[str, str]:
    """The translations of one gettext ``.po`` file as ``{msgid: msgstr}``: multi-line strings are joined,
    the header (empty msgid), untranslated entries (empty msgstr) and fuzzy entries are left out. A line
    the reader does not understand is a ``ValueError`` that names ``file:line``."""
    entries: dict[str, str] = {}
    msgid = msgstr = None
    field = None
    fuzzy = next_fuzzy = False

    def flush() -> None:
        if msgid and msgstr and not fuzzy:
            entries[msgid] = msgstr

    for number, raw in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        try:
            if not line:
                continue
            if line.startswith("#"):
                if line.startswith("#,") and "fuzzy" in (flag.strip() for flag in line[2:].split(",")):
                    next_fuzzy = True
                continue
            if line.startswith("msgid "):
                if field == "id":
                    raise ValueError("a msgid without its msgstr before it")
                flush()
                msgid, msgstr, field = _unquote(line[6:]), None, "id"
                fuzzy, next_fuzzy = next_fuzzy, False
            elif line.startswith("msgstr "):
                if field != "id":
                    raise ValueError("a msgstr without a msgid")
                msgstr, field = _unquote(line[7:]), "str"
            elif line.startswith('"'):
                if field == "id":
                    msgid += _unquote(line)
                elif field == "str":
                    msgstr += _unquote(line)
                else:
                    raise ValueError("a string outside an entry")
            else:
                raise ValueError(f"unknown line {line[:40]!r}")
        except ValueError as exc:
            raise ValueError(f"{path}:{number}: {exc}") from None
    if field == "id":
        raise ValueError(f"{path}: the last msgid has no msgstr")
    flush()
    return entries


def catalogue(language: str) -> dict[str, str]:
    """Every translation of ``language`` (all its ``.po`` files merged), read once; empty for English."""
    if language not in LANGUAGES:
        raise ValueError(f"unknown language {language!r}; expected one of {', '.join(LANGUAGES)}")
    if language not in _catalogues:
        merged: dict[str, str] = {}
        for path in sorted((LOCALE_DIR / language / "LC_MESSAGES").glob("*.po")):
            merged.update(read_po(path))
        _catalogues[language] = merged
    return _catalogues[language]


def system_language(environ: dict[str, str] | None = None) -> str:
    """The language the environment asks for: ``SANDBOX_LANG``, then the POSIX locale variables;
    Portuguese of any country maps to ``pt_BR``, anything else to English."""
    env = os.environ if environ is None else environ
    for name in ("SANDBOX_LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG"):
        value = env.get(name, "")
        for part in value.split(":"):
            code = part.split(".")[0].split("@")[0]
            if not code or code in ("C", "POSIX"):
                continue
            if code.lower().startswith("pt"):
                return "pt_BR"
            return SOURCE_LANGUAGE
    return SOURCE_LANGUAGE


def parse_language(text: str) -> str:
    """The language code ``text`` names: a key of ``LANGUAGES``, in any letter case, with ``-`` or ``_``
    (``pt-BR``, ``pt_br``); ValueError naming the choices otherwise."""
    wanted = text.strip().replace("-", "_").lower()
    for code in LANGUAGES:
        if code.lower() == wanted:
            return code
    raise ValueError(f"unknown language {text!r}; expected one of {', '.join(LANGUAGES)}")


def language() -> str:
    """The language now in use (its code, a key of ``LANGUAGES``)."""
    global _current
    if _current is None:
        _current = system_language()
    return _current


def set_language(code: str) -> None:
    """Switch every translated string to ``code`` from the next call of ``_`` on (no restart)."""
    global _current
    catalogue(code)  # refuses an unknown code and reads the catalogue before the switch
    _current = code


class Message(str):
    """The English text of ``pattern.format(*args, **values)``, as a ``str``, that keeps its pattern and
    values so that ``translate`` can make it again in another language: the pattern through the catalogue,
    each value that is a ``Message`` translated in turn, the rest (numbers, names) as they are. Made by
    ``N_`` and ``join``; a pattern without values is used as it is (braces and all)."""

    pattern: str
    args: tuple
    values: dict

    def __new__(cls, pattern: str, args: tuple = (), values: dict | None = None) -> Message:
        values = dict(values or {})
        self = super().__new__(cls, pattern.format(*args, **values) if args or values else pattern)
        self.pattern, self.args, self.values = str(pattern), tuple(args), values
        return self

    def __reduce__(self):
        return Message, (self.pattern, self.args, self.values)

    def translated(self, language: str) -> str:
        """This message in ``language`` (the English text when a translated pattern does not fit its
        values, which the catalogue test rules out)."""
        pattern = translate(self.pattern, language)
        if not self.args and not self.values:
            return pattern
        args = [translate(a, language) if isinstance(a, Message) else a for a in self.args]
        values = {k: translate(v, language) if isinstance(v, Message) else v for k, v in self.values.items()}
        try:
            return pattern.format(*args, **values)
        except (KeyError, IndexError, ValueError):
            return str.__str__(self)


def translate(text: str, language: str) -> str:
    """``text`` (an English source string or a ``Message``) in ``language``; itself when untranslated."""
    if isinstance(text, Message):
        return str.__str__(text) if language == SOURCE_LANGUAGE else text.translated(language)
    if language == SOURCE_LANGUAGE:
        return text
    return catalogue(language).get(text, text)


def _(text: str) -> str:
    """``text`` (an English source string or a ``Message``) in the current language; itself when
    untranslated."""
    if _current == SOURCE_LANGUAGE and type(text) is str:  # the common case, without two more calls
        return text
    return translate(text, language())


def N_(text: str, /, *args: object, **values: object) -> Message:
    """Mark ``text`` for translation without translating it now: returns it unchanged (as a ``Message``,
    which is a ``str``), to be passed through ``_`` where it is shown. With arguments, ``text`` is a
    ``str.format`` pattern: returns the English text it makes, which ``_`` makes again in the language
    current when it is shown."""
    return Message(text, args, values)


def join(separator: str, items: Iterable[str]) -> Message:
    """``separator.join(items)`` as a ``Message``: ``_`` translates each item that is a ``Message``."""
    items = tuple(items)
    escaped = separator.replace("{", "{{").replace("}", "}}")
    return Message(escaped.join("{" + str(k) + "}" for k in range(len(items))), items)
