"""Secrets inside ordinary files, found with detect-secrets' detectors and masked before anything leaves.

The admission rules keep files *named* like secrets (``.env``, ``id_rsa``)
out of the index; this module handles secrets *inside* ordinary files: an AWS
key pair or a token assigned in ``settings.py``, a private-key block pasted
into a ``.txt``, a password in a connection URL. It is applied twice: at index
time (``index/parse.py`` masks the text before chunking, so neither the chunk
table, nor the BM25 postings, nor the on-disk cache ever holds a secret) and
at the edge (``server/wire.py`` and the command line's text scrub every string
they return, which catches what never went through the index: hover text a
language server produced, a buffer's similar-code window, a commit message).

The detectors are detect-secrets' (Yelp, on PyPI), used as a library: every
regex-based plugin but public IP addresses, its keyword detector (a value
assigned to ``password``, ``secret``, ``api_key``, ...) with the rules it
applies per file type, and its default false-positive filters (``_filtered``).
Its verification step (which calls the services) is never used, and neither
are its entropy detectors, which would mask every git hash and test vector.

Speed: run as detect-secrets runs them, line by line, the patterns would cost
more than parsing. So a pattern runs only on the stretches of text around the
literals every match of it must contain (``AKIA``, ``ghp_``, ``PRIVATE KEY``,
``password``; ``_rules``), and one Aho-Corasick pass finds which literals a
text holds (``_literals``); the scan costs 17% of parsing on Django, 27% on
FastAPI (docs/reliability.md). ``tests/unit/test_redaction.py`` checks on
generated text that this finds exactly what the plugins find line by line.

Importing detect-secrets imports every one of its plugins and ``requests``
(0.1–0.2 s), so this module imports it when it first scans a text: a warm
start that parses nothing and answers in-process never pays for it, and the
language server loads them once indexing ends (``load_detectors``).

Masking: a secret becomes ``[redacted]`` padded with ``*`` to its length in
UTF-8 bytes, a private key's body ``[redacted]***`` line by line. Lines, line
lengths in bytes and so byte offsets stay as they were: line numbers,
tree-sitter trees parsed from the original buffer, and chunk boundaries all
still hold.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ahocorasick_rs import BytesAhoCorasick
    from detect_secrets.plugins.base import BasePlugin
    from detect_secrets.plugins.keyword import KeywordDetector

# Changes whenever what is masked changes, so that caches built under other rules are rebuilt.
RULES_VERSION = "detect-secrets-1.5.0/1"
MARKER = "[redacted]"
# A private key's body is masked up to its END line, or this many characters when there is none.
MAX_KEY_CHARS = 16_384
# A value assigned to a secret-like name is masked wherever it stands alone in the text when it is at least this
# long, else only on the line where it was assigned (``password = "test"`` must not mask ``def test_login``).
MIN_SPREAD_CHARS = 6
# On a long line patterns see this many characters before an anchor and ``REACH`` after it (``LONG_REACH`` for
# tokens that can be long): no match of theirs starts further back or is longer.
BEFORE, REACH, LONG_REACH = 256, 512, 4_096
_KEY_END = re.compile(r"-----END[ A-Z0-9]*-----|Private-MAC: *\S*")
# Characters case-insensitive patterns take for ASCII letters, and those letters.
_FOLDS = (("\u0130", "i"), ("\u0131", "i"), ("\u017f", "s"), ("\u212a", "k"))


@dataclass(frozen=True, slots=True)
class _Confirm:
    """A folded literal counts only where ``regex`` matches the lowercased text from ``before`` characters
    ahead of it to ``after`` characters past it: ``key`` is everywhere (``keyword``), ``api_key`` is not."""

    regex: re.Pattern[bytes]
    before: int
    after: int


@dataclass(frozen=True, slots=True)
class _Anchors:
    """Where a pattern can match, so that it runs only there.

    Every match contains one of the ``exact`` literals (as written), one of the ``folded`` ones (in lowercased
    text, where ``confirm`` holds), or a match of ``guard`` (a fast pattern: it starts with a literal); the
    stretch around it must also match ``needs``. ``whole`` takes the whole match as the secret where the
    pattern's group is only a prefix (``(ghp|gho|...)_...``); ``reach`` is how far past its anchor a match may
    run on a long line.
    """

    exact: tuple[str, ...] = ()
    folded: tuple[str, ...] = ()
    confirm: _Confirm | None = None
    guard: re.Pattern[str] | None = None
    needs: re.Pattern[str] | None = None
    whole: bool = False
    reach: int = REACH

    # The literal the guard starts with.
    guard_literal: str = ""

    @property
    def literals(self) -> tuple[str, ...]:
        """The exact literals one of which must be in a text for the pattern to match there (a guard's start)."""
        return self.exact + ((self.guard_literal,) if self.guard is not None else ())


def _ascii_pattern(pattern: str) -> re.Pattern[bytes]:
    """``pattern`` for the lowercased ASCII text (``_Scan.lower``), where other characters are ``?``."""
    return re.compile(re.sub(r"[^\x00-\x7f]", ".", pattern).encode("ascii"))


# Every word of the keyword detector's list (``api_?key``, ``passwd``, ``contraseña``, ...) contains one of these,
# at most 9 characters after the word's start (``database_pass``) and 5 before its end (``key_pass``); the
# confirming pattern is the list itself (``_Keyword.anchors``).
_KEYWORD_FOLDED = ("key", "pass", "pwd", "secret", "contrase")
# Every pattern of the keyword detector needs one of these characters (an assignment, a comparison, a call or
# ``;`` after a quoted value) on the line, and those of the sets for most file types a quote.
_KEYWORD_NEEDS = re.compile(r"[=:!(;]")
_QUOTE = re.compile(r"[\"'`]")
# The vendor keyword patterns (Cloudant, SoftLayer, IBM) need one of these words, maybe closed by a quote and a
# bracket, then an assignment (``=``, ``:``, ``=>``, spaces), then a value of at least 24 such characters.
_ASSIGNED = _Anchors(folded=("key", "pw", "pass", "token"),
                     confirm=_Confirm(re.compile(rb"(?:key|pwd|pw|password|pass|token)[\"']?\]? *[=: ]"), 0, 256),
                     needs=re.compile(r"[=:> \"'][\w-]{24}"))


@dataclass(frozen=True, slots=True)
class _Pattern:
    regex: re.Pattern[str]
    where: _Anchors


@dataclass(frozen=True, slots=True)
class _Rule:
    """One detect-secrets plugin and where each of its patterns (in its ``denylist`` order) can match."""

    plugin: BasePlugin
    patterns: tuple[_Pattern, ...]


def _rule(plugin: type[Any], *where: _Anchors) -> _Rule:
    regexes = tuple(plugin.denylist)
    assert len(regexes) == len(where), f"{plugin.__name__}: one set of anchors per pattern"
    return _Rule(plugin(), tuple(_Pattern(regex, anchors) for regex, anchors in zip(regexes, where)))


def _exact(*literals: str, whole: bool = False, reach: int = REACH) -> _Anchors:
    return _Anchors(exact=literals, whole=whole, reach=reach)


def _folded(*literals: str) -> _Anchors:
    return _Anchors(folded=literals)


def _guard(literal: str, then: str = "", whole: bool = False, reach: int = REACH) -> _Anchors:
    """A guard: ``literal`` followed by what matches ``then``."""
    return _Anchors(guard=re.compile(re.escape(literal) + then), guard_literal=literal, whole=whole, reach=reach)


@cache
def _rules() -> tuple[_Rule, ...]:
    """Every regex-based detector of detect-secrets except public IP addresses (not secrets).

    Guards are a pattern's own literal start with what must follow it; one guard serves every ``gl<kind>-``
    token of GitLab, one every ``gh<kind>_`` of GitHub.
    """
    from detect_secrets.plugins import (
        artifactory,
        aws,
        azure_storage_key,
        basic_auth,
        cloudant,
        discord,
        github_token,
        gitlab_token,
        ibm_cloud_iam,
        ibm_cos_hmac,
        jwt,
        mailchimp,
        npm,
        openai,
        private_key,
        pypi_token,
        sendgrid,
        slack,
        softlayer,
        square_oauth,
        stripe,
        telegram_token,
        twilio,
    )

    gitlab = _guard("gl", r"[a-z]{2,5}-", whole=True)
    keys = _exact("PRIVATE KEY", "PuTTY-User-Key-File-2")
    key_headers = len(tuple(private_key.PrivateKeyDetector().denylist))
    return (
        _rule(artifactory.ArtifactoryDetector, _guard("AKC", r"[a-zA-Z0-9]{10}"), _guard("AP", r"[\dABCDEF][a-zA-Z0-9]{8}")),
        _rule(aws.AWSKeyDetector, _exact("A3T", "ABIA", "ACCA", "AKIA", "ASIA"), _folded("aws")),
        _rule(azure_storage_key.AzureStorageKeyDetector, _exact("AccountKey=")),
        _rule(basic_auth.BasicAuthDetector, _guard("://", r"[^:/?#\[\]@!$&'()*+,;=\s]+:[^:/?#\[\]@!$&'()*+,;=\s]+@")),
        _rule(cloudant.CloudantDetector, _ASSIGNED, _ASSIGNED, _folded("cloudant.com"), _folded("cloudant.com")),
        # The token's last two dot-separated parts; the bot token's ``:`` and what follows it.
        _rule(discord.DiscordBotTokenDetector, _guard(".", r"[a-zA-Z\d_-]{6}\.[a-zA-Z\d_-]{27}")),
        _rule(github_token.GitHubTokenDetector, _guard("gh", r"[pousr]_", whole=True)),
        _rule(gitlab_token.GitLabTokenDetector, gitlab, _exact("GR1348941"), gitlab, gitlab, gitlab,
              _guard("glagent-", reach=LONG_REACH), gitlab),
        _rule(jwt.JwtTokenDetector, _exact("eyJ", reach=LONG_REACH)),
        _rule(mailchimp.MailchimpDetector, _guard("-us", "[0-9]")),
        _rule(npm.NpmDetector, _exact(":_authToken=", reach=LONG_REACH)),
        _rule(openai.OpenAIDetector, _exact("T3BlbkFJ")),
        _rule(private_key.PrivateKeyDetector, *[keys] * key_headers),
        _rule(pypi_token.PypiTokenDetector, _exact("pypi-AgE"), _exact("pypi-AgE")),
        _rule(sendgrid.SendGridDetector, _exact("SG.")),
        _rule(slack.SlackDetector, _folded("xox"), _folded("hooks.slack.com")),
        _rule(softlayer.SoftlayerDetector, _ASSIGNED, _folded("softlayer")),
        _rule(square_oauth.SquareOAuthDetector, _exact("sq0csp-")),
        _rule(stripe.StripeDetector, _exact("k_live_")),
        _rule(telegram_token.TelegramBotTokenDetector, _guard(":", r"[0-9A-Za-z_-]{35}")),
        _rule(twilio.TwilioKeyDetector, _guard("AC", r"[a-z0-9]{32}"), _guard("SK", r"[a-z0-9]{32}")),
        _rule(ibm_cloud_iam.IbmCloudIamDetector, _ASSIGNED),
        # ``secret_access_key = ...``: the key word right before the assignment.
        _rule(ibm_cos_hmac.IbmCosHmacDetector, _ASSIGNED),
    )


@cache
def _by_literal() -> tuple[dict[str, list[int]], dict[str, list[int]]]:
    """Exact and folded literals → the patterns (by position in ``_patterns()``) that need them: each literal
    is looked for once per text, and only the patterns whose literals are there run."""
    exact: dict[str, list[int]] = {}
    folded: dict[str, list[int]] = {}
    for number, (_, pattern) in enumerate(_patterns()):
        for literal in pattern.where.literals:
            exact.setdefault(literal, []).append(number)
        for literal in pattern.where.folded:
            folded.setdefault(literal, []).append(number)
    return exact, folded


@cache
def _patterns() -> tuple[tuple[BasePlugin, _Pattern], ...]:
    return tuple((rule.plugin, pattern) for rule in _rules() for pattern in rule.patterns)


@dataclass(frozen=True, slots=True)
class _Detectors:
    """What a scan needs from detect-secrets besides the regex rules: its keyword detector with the anchors of
    its words and its patterns per file type, its filters, and the name of a private key's findings."""

    keyword: KeywordDetector
    keyword_anchors: _Anchors
    # The keyword patterns for a path, and the sets of them whose values must be quoted.
    groups_for: Callable[[str], dict]
    quoted_sets: tuple[dict, ...]
    heuristic: ModuleType
    private_key: str


@cache
def _detectors() -> _Detectors:
    """detect-secrets, imported on the first scan (see the module doc)."""
    from detect_secrets.filters import heuristic
    from detect_secrets.plugins import keyword, private_key
    from detect_secrets.util.filetype import determine_file_type

    def groups_for(path: str) -> dict:
        return keyword.REGEX_BY_FILETYPE.get(determine_file_type(path), keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP)

    return _Detectors(
        keyword=keyword.KeywordDetector(),
        keyword_anchors=_Anchors(folded=_KEYWORD_FOLDED, confirm=_Confirm(_ascii_pattern("|".join(keyword.DENYLIST)), 9, 5)),
        groups_for=groups_for,
        quoted_sets=(keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP, keyword.C_PLUS_PLUS_REGEX_TO_GROUP,
                     keyword.COMMON_C_DENYLIST_REGEX_TO_GROUP),
        heuristic=heuristic,
        private_key=private_key.PrivateKeyDetector().secret_type)


@dataclass(frozen=True, slots=True)
class _Literals:
    """Every literal a scan looks for, and what finds which of them a text holds.

    Searched for one at a time, the 41 literals cost a quarter of parsing Django (0.69 of 5.1 s,
    ``bench/redaction_bench.py``): each search reads the whole text. An Aho-Corasick automaton reads it once
    for all of them. The one-character literals are in nearly every text, where ``in`` stops at the first.
    """

    single: tuple[str, ...]
    # The other exact literals, numbered as the finder reports them, and the finder (over ``_Scan``'s ASCII text).
    exact: tuple[str, ...]
    exact_finder: BytesAhoCorasick
    # The folded literals, the keyword detector's included, and their finder (over ``_Scan.lower``).
    folded: tuple[str, ...]
    folded_finder: BytesAhoCorasick


@cache
def _literals() -> _Literals:
    from ahocorasick_rs import BytesAhoCorasick

    exact, folded = _by_literal()
    longer = tuple(literal for literal in exact if len(literal) > 1)
    lowered = tuple(dict.fromkeys((*folded, *_KEYWORD_FOLDED)))
    return _Literals(single=tuple(literal for literal in exact if len(literal) == 1), exact=longer,
                     exact_finder=BytesAhoCorasick([literal.encode("ascii") for literal in longer]),
                     folded=lowered, folded_finder=BytesAhoCorasick([literal.encode("ascii") for literal in lowered]))


def _lowered(text: str, ascii_text: bytes) -> bytes:
    """The text as lowercase ASCII, one byte per character (others become ``?``), so that positions in it are
    positions in the text; ``ascii_text`` is the text so encoded. The four characters that case-insensitive
    patterns take for ASCII letters (``İ``, ``ı``, ``ſ`` and the Kelvin sign) are folded to them first."""
    if not text.isascii():
        folds = [(special, letter) for special, letter in _FOLDS if special in text]
        if folds:
            for special, letter in folds:
                text = text.replace(special, letter)
            return text.encode("ascii", "replace").lower()
    return ascii_text.lower()


def load_detectors() -> None:
    """Import and compile the detectors now rather than on the first scan (a server, once indexing ends)."""
    _literals()
    _detectors()


@dataclass(frozen=True, slots=True)
class Secret:
    """A secret value found in a text, the detect-secrets type that found it, and the line it was found on."""

    kind: str
    value: str
    line: str


def find_secrets(text: str, path: str | None = None) -> list[Secret]:
    """The secrets detect-secrets finds in ``text`` scanning it line by line (after its default filters).

    ``path`` selects the keyword detector's rules for the file type (``password: x`` counts in YAML, not in
    Python, where it is a type annotation); without one the rules that need quotes apply.
    """
    found: dict[tuple[str, str], Secret] = {}
    scan = _Scan(text)
    exact, folded = _by_literal()
    active = {number for literal, numbers in exact.items() if literal in scan.present for number in numbers}
    active.update(number for literal, numbers in folded.items() if literal in scan.present_folded
                  for number in numbers)
    patterns = _patterns()
    for number in sorted(active):
        plugin, pattern = patterns[number]
        where = pattern.where
        for line in scan.stretches(where):
            if where.needs is None or where.needs.search(line):
                for value in _values(pattern.regex, line, where.whole):
                    _keep(found, plugin, value, line)
    detectors = _detectors()
    groups = detectors.groups_for(path or "")
    quoted = any(groups is quoted_set for quoted_set in detectors.quoted_sets)
    for line in scan.stretches(detectors.keyword_anchors):
        if _KEYWORD_NEEDS.search(line) and (not quoted or _QUOTE.search(line)):
            for value in detectors.keyword.analyze_string(line, denylist_regex_to_group=groups):
                _keep(found, detectors.keyword, value, line)
    return list(found.values())


def redact(text: str, path: str | None = None) -> str:
    """``text`` with every secret masked, keeping each line's length in UTF-8 bytes (see the module doc)."""
    if not text:
        return text
    secrets = find_secrets(text, path)
    if not secrets:
        return text
    spans: list[tuple[int, int]] = []
    for secret in secrets:
        spans.extend(_spans_of(text, secret))
    return _masked(text, spans)


def redact_json(value: Any) -> Any:
    """A JSON value (dicts, lists, strings, numbers) with every string redacted: what the edge sends.

    The detectors work line by line, so the strings joined by newlines hold a secret whenever one of them
    does: one scan of the joined text clears the usual answer (thousands of short strings, no secret), and
    only an answer with a secret is redacted string by string.
    """
    strings: list[str] = []
    _strings_of(value, strings)
    if not find_secrets("\n".join(strings)):
        return value
    return _redact_each(value)


def _strings_of(value: Any, strings: list[str]) -> None:
    if isinstance(value, str):
        strings.append(value)
    elif isinstance(value, dict):
        for item in value.values():
            _strings_of(item, strings)
    elif isinstance(value, list):
        for item in value:
            _strings_of(item, strings)


def _redact_each(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {key: _redact_each(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_redact_each(item) for item in value]
    return value


class _Scan:
    """One text's stretches that hold each anchor, found once per anchor however many patterns share it.

    A stretch is the anchor's line, cut to ``BEFORE`` characters before the anchor and the pattern's reach
    after it: on a long line (an SVG's embedded image, a data file) the detectors' patterns are slow, and no
    match of theirs starts further back or runs longer.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self._spans: dict[tuple, list[tuple[int, int]]] = {}
        literals = _literals()
        # One byte per character, others as ``?``: an ASCII literal is in it exactly where it is in the text.
        ascii_text = text.encode("ascii", "replace")
        self.lower = _lowered(text, ascii_text)
        self.present = {literal for literal in literals.single if literal in text}
        self.present.update(literals.exact[number] for number, _, _
                            in literals.exact_finder.find_matches_as_indexes(ascii_text, overlapping=True))
        self.present_folded = {literals.folded[number] for number, _, _
                               in literals.folded_finder.find_matches_as_indexes(self.lower, overlapping=True)}

    def stretches(self, where: _Anchors) -> list[str]:
        """The stretches where a pattern can match, merged where they overlap, in text order."""
        spans: set[tuple[int, int]] = set()
        if where.guard is not None:
            spans.update(self._guarded(where.guard, where.reach))
        spans.update(span for literal in where.exact if literal in self.present
                     for span in self._exact(literal, where.reach))
        spans.update(span for literal in where.folded if literal in self.present_folded
                     for span in self._folded(literal, where.reach, where.confirm))
        return self._merged(sorted(spans)) if spans else []

    def _guarded(self, guard: re.Pattern[str], reach: int) -> list[tuple[int, int]]:
        key = (guard.pattern, reach)
        if key not in self._spans:
            self._spans[key] = [self._span(match.start(), match.end(), reach) for match in guard.finditer(self.text)]
        return self._spans[key]

    def _exact(self, literal: str, reach: int) -> list[tuple[int, int]]:
        key = (literal, reach)
        if key not in self._spans:
            spans: list[tuple[int, int]] = []
            position = self.text.find(literal)
            while position != -1:
                spans.append(self._span(position, position + len(literal), reach))
                position = self.text.find(literal, spans[-1][1])
            self._spans[key] = spans
        return self._spans[key]

    def _folded(self, literal: str, reach: int, confirm: _Confirm | None) -> list[tuple[int, int]]:
        key = (literal, reach, confirm)
        if key not in self._spans:
            spans: list[tuple[int, int]] = []
            lower, needle = self.lower, literal.encode("ascii")
            position = lower.find(needle)
            while position != -1:
                end = position + len(needle)
                if confirm is None or confirm.regex.search(lower, max(0, position - confirm.before),
                                                           end + confirm.after):
                    spans.append(self._span(position, end, reach))
                    position = lower.find(needle, spans[-1][1])
                else:
                    position = lower.find(needle, position + 1)
            self._spans[key] = spans
        return self._spans[key]

    def _span(self, start: int, end: int, reach: int) -> tuple[int, int]:
        """The stretch around ``text[start:end]``: its line, cut to ``BEFORE`` and ``reach`` characters."""
        text = self.text
        line_start = text.rfind("\n", max(0, start - BEFORE), start) + 1 or max(0, start - BEFORE)
        line_end = text.find("\n", end, end + reach)
        return line_start, min(len(text), end + reach) if line_end == -1 else line_end

    def _merged(self, spans: list[tuple[int, int]]) -> list[str]:
        merged: list[list[int]] = []
        for start, end in spans:
            if merged and start <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        return [self.text[start:end].rstrip("\r") for start, end in merged]


def _values(regex: re.Pattern[str], line: str, whole: bool) -> Iterator[str]:
    """What a regex-based detector reports for one line: each non-empty group (detect-secrets' rule), or the
    whole match where its group is only a prefix."""
    if whole:
        yield from (match.group() for match in regex.finditer(line))
        return
    for match in regex.findall(line):
        if isinstance(match, tuple):
            yield from (group for group in match if group)
        else:
            yield match


def _keep(found: dict[tuple[str, str], Secret], plugin: BasePlugin, value: str, line: str) -> None:
    """Record a finding unless it is a false positive by detect-secrets' filters (see ``_filtered``)."""
    # Some patterns include the delimiter around the value (Artifactory's quotes or ``=``).
    value = value.strip().strip("=:\"'")
    if not value or _filtered(plugin, value, line):
        return
    found.setdefault((plugin.secret_type, value), Secret(plugin.secret_type, value, line))


def _filtered(plugin: BasePlugin, value: str, line: str) -> bool:
    """detect-secrets' default filters, with one change: the filters about *names* (an indirect reference
    ``secret = get_secret()``, an id, a template, a ``$variable``) apply to the keyword detector only, so a
    token of a recognised format is masked wherever it stands (``os.getenv("T", "ghp_...")`` included)."""
    detectors = _detectors()
    heuristic = detectors.heuristic
    if heuristic.is_sequential_string(value) or heuristic.is_not_alphanumeric_string(value):
        return True
    if plugin is not detectors.keyword:
        return False
    return (heuristic.is_potential_uuid(value) or heuristic.is_likely_id_string(value, line, plugin)
            or heuristic.is_templated_secret(value) or heuristic.is_prefixed_with_dollar_sign(value)
            or heuristic.is_indirect_reference(line))


def _spans_of(text: str, secret: Secret) -> Iterator[tuple[int, int]]:
    """Where ``secret`` is in ``text``: a private key's body after each header; a recognised token or a long
    assigned value wherever it stands (a value must stand alone: not inside a longer word); a short assigned
    value only on the lines it was found on."""
    detectors = _detectors()
    if secret.kind == detectors.private_key:
        yield from _key_bodies(text, secret.value)
        return
    value = secret.value
    if secret.kind != detectors.keyword.secret_type:
        yield from _occurrences(text, value)
        return
    alone = re.compile(rf"(?<!\w){re.escape(value)}(?!\w)")
    if len(value) >= MIN_SPREAD_CHARS:
        yield from (match.span() for match in alone.finditer(text))
        return
    for start, end in _occurrences(text, secret.line):
        yield from (match.span() for match in alone.finditer(text, start, end))


def _occurrences(text: str, value: str) -> Iterator[tuple[int, int]]:
    position = text.find(value)
    while position != -1:
        yield position, position + len(value)
        position = text.find(value, position + len(value))


def _key_bodies(text: str, header: str) -> Iterator[tuple[int, int]]:
    """What follows each private-key header (after the dashes closing its line) up to its END line, or through
    its Private-MAC line (PuTTY), or ``MAX_KEY_CHARS`` when neither comes."""
    position = text.find(header)
    while position != -1:
        start = position + len(header)
        while start < len(text) and text[start] == "-":
            start += 1
        end_match = _KEY_END.search(text, start, start + MAX_KEY_CHARS)
        if end_match is None:
            end = min(len(text), start + MAX_KEY_CHARS)
        else:
            end = end_match.end() if end_match.group().startswith("Private-MAC") else end_match.start()
        yield start, end
        position = text.find(header, end)


def _masked(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with each span masked: line breaks kept, every other character as many ``*`` as its UTF-8
    bytes, and ``[redacted]`` over the start of each masked run within a line that is long enough."""
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    parts, position = [], 0
    for start, end in merged:
        parts.append(text[position:start])
        parts.append("\n".join(_mask(piece) for piece in text[start:end].split("\n")))
        position = end
    parts.append(text[position:])
    return "".join(parts)


def _mask(piece: str) -> str:
    """One line's part masked: as long as ``piece`` in UTF-8 bytes, ``\\r`` kept."""
    if piece.endswith("\r"):
        return _mask(piece[:-1]) + "\r"
    size = len(piece.encode("utf-8"))
    return MARKER + "*" * (size - len(MARKER)) if size >= len(MARKER) else "*" * size
