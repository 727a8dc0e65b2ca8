"""Numbers in short answers, for the ``numeric`` method and numbers in sentences.

Numbers (:func:`parse_number`, :func:`find_single_number`) are read as exact
:class:`~decimal.Decimal` values, so a tolerance of 0.01 accepts ``12.81`` against
``12.8`` without binary rounding deciding the boundary. Accepted: signs, thousands
separators (``"3,420"``), decimals, scientific notation (``"1.2e3"``), a currency
symbol, a percent sign or word, a scale word (``hundred``, ``thousand``, ``million``,
``billion``, ``bn``, ``trillion``: :data:`~opik_semantic_metrics.vocabulary.SCALE_WORDS`)
and a short unit (at most three words, e.g. ``"tCO2e"``, ``"kWh per year"``). Not
accepted, by design: decimal commas (``"12,8"`` is ambiguous with a thousands
separator), spaces and underscores as thousands separators (``"1_000"`` is Python's
notation, not an answer's; the text normal form reads it as ``"1 000"``),
exponents of more than 4 digits, ranges and several numbers. A number that is not
accepted is no number at all, never a piece of one: ``"1_000"`` and ``"1e99999"`` are
not 1. A number whose digits written out would be more than :data:`MAX_DIGITS` is shown
with an exponent (``"1e9999"`` as ``1e+9999``).

Texts are read in their normal form (:mod:`~opik_semantic_metrics.answers.normalize`),
with the same linear passes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Context, Decimal

from opik_semantic_metrics.answers.normalize import (
    BOUND_SYMBOLS,
    CURRENCY_CLASS,
    UNIT_CANONICAL,
    UNIT_HINTS,
    UNIT_SPELLING_FIRST,
    normal_forms,
    prepare,
)
from opik_semantic_metrics.vocabulary import (
    ENGLISH_STOP_WORDS,
    NEGATING_WORDS,
    NEGATIVE_VERB_FORMS,
    REPORTING_SCALE_PATTERN,
    SCALE_PATTERN,
    SCALE_WORDS,
    singular_scale,
    without_apostrophes,
)

#: Enough digits for any real answer, and a bound on the cost of exact arithmetic.
MAX_DIGITS = 60
#: Whole-text numbers longer than this are not numbers (a quick bail-out for long texts).
MAX_NUMBER_TEXT = 120
#: Words after a number that make the text something other than one number with a unit.
_NOT_A_UNIT = frozenset(
    {"and", "or", "to", "than", "more", "less", "between", "vs", "versus"} | NEGATING_WORDS
)
#: Words just before a number that make a sentence bound or negate it, not state it: the
#: words that negate what follows them, the negated auxiliaries (in normal form, "isn't" is
#: "isnt") and the words of comparison.
_BOUNDS_BEFORE = frozenset(
    NEGATING_WORDS
    | without_apostrophes(NEGATIVE_VERB_FORMS)
    | {"than", "least", "most", "over", "under", "above", "below"}
    | {"fewer", "greater", "exceeding", "exceeds", "beyond", "except", "maximum", "minimum"}
)
#: Phrases just before or just after a number that bound or negate it ("up to 5",
#: "not equal to 5", "5 at most").
_BOUNDING_PHRASES_BEFORE = (("up", "to"), ("not", "equal", "to"))
_BOUNDING_PAIRS_AFTER = frozenset({("at", "most"), ("at", "least")})
#: Words just after a number that bound it ("5 maximum"; not "min", which is minutes).
_BOUNDS_AFTER = frozenset({"maximum", "minimum"})
# Exact arithmetic with room for MAX_DIGITS digits, a 4-digit exponent and a scale.
_DECIMAL_CONTEXT = Context(prec=MAX_DIGITS + 20, Emax=10**6, Emin=-(10**6))

# Bounded repeats: a run of digits longer than any answer's fails after a few steps
# instead of being matched and backtracked over in full.
_DIGITS = r"(?:\d{1,3}(?:,\d{3}){1,20}(?:\.\d{1,60})?|\d{1,60}(?:\.\d{1,60})?|\.\d{1,60})"
# Digits and exponent are read in full or not at all: never a piece of "1.2.3", "12,8" or
# "1_000" (an underscore separates, as in the text normal form), nor the mantissa of an
# exponent of more than 4 digits ("1e99999" is no number, not 1). A product or size
# ("1920x1080", "2x4") and a hexadecimal number ("0x10", "0xff") are no number either:
# read as 1920, 2 or 0 with a unit, they would match a bare "1920", "2" or "0".
_MANTISSA_AND_EXPONENT = (
    rf"(?P<digits>{_DIGITS})(?:e(?P<exponent>[-+]?\d{{1,4}}))?"
    r"(?![.,_]?\d|e[-+]?\d|x\d|(?<=(?<![\w.,])0)x[a-f])"
)
_WHOLE_NUMBER = re.compile(
    rf"(?P<currency>{CURRENCY_CLASS})?\s*(?P<sign>[-+])?\s*(?P<currency_after_sign>{CURRENCY_CLASS})?\s*"
    rf"{_MANTISSA_AND_EXPONENT}(?P<rest>.*)",
    re.DOTALL,
)
_PERCENT_WORD = re.compile(r"\s*(?:%|percent\b|per cent\b|pct\b)")
_SCALE_WORD = re.compile(rf"\s*(?P<scale>{SCALE_PATTERN})\b")
# Nor is a number the exponent of one whose exponent is too long ("1e-12345": not 12345).
_NUMBER_IN_TEXT = re.compile(
    rf"(?<![\w.,])(?<!\de[-+])(?P<sign>[-+])?(?P<currency>{CURRENCY_CLASS})?{_MANTISSA_AND_EXPONENT}"
    rf"(?P<scale>\s*(?:{SCALE_PATTERN})\b)?"
    rf"(?P<percent>\s*(?:%|percent\b|per cent\b|pct\b))?"
)


@dataclass(frozen=True)
class ParsedNumber:
    """A number read from an answer.

    Attributes:
        value: The exact value, scale word applied (``"19.5 million"`` -> 19500000); a
            percent keeps its number (``"82%"`` -> 82).
        percent: Written with ``%`` or a percent word.
        unit: The unit after the number in normal form (``""`` when there is none);
            a currency symbol counts as a unit.
        scaled: Written with a scale word (``"26 million"``).
    """

    value: Decimal
    percent: bool = False
    unit: str = ""
    scaled: bool = False

    def __str__(self) -> str:
        text = _plain(self.value) + ("%" if self.percent else "")
        return f"{text} {self.unit}" if self.unit else text


def _plain(value: Decimal) -> str:
    """A Decimal without trailing zeros, and without exponent notation unless the digits
    written out would be more than an answer may have: 82, 12.8, 0.0001, 1e+9999.

    The exponent keeps what a reason or metadata shows of ``"1e9999"`` short and true;
    cut short, its 10,000 digits would read as some other number.
    """
    value = value.normalize(_DECIMAL_CONTEXT)
    if abs(value.adjusted()) >= MAX_DIGITS:
        return format(value, "e")
    text = format(value, "f")
    return text if text != "-0" else "0"


def _decimal(sign: str | None, digits: str, exponent: str | None) -> Decimal | None:
    digits = digits.replace(",", "")
    if len(digits) > MAX_DIGITS:
        return None
    value = Decimal(digits)
    if exponent is not None:
        value = _DECIMAL_CONTEXT.scaleb(value, int(exponent))
    return -value if sign == "-" else value


def number_from_value(value: int | float) -> ParsedNumber | None:
    """A Python int or finite float as a number (floats through their shortest repr).

    Example:
        >>> str(number_from_value(82.0)), str(number_from_value(3420))
        ('82', '3420')
    """
    if isinstance(value, int):
        if abs(value) >= 10**MAX_DIGITS:
            return None
        return ParsedNumber(Decimal(value))
    return ParsedNumber(Decimal(repr(value)))


def parse_number(text: str) -> ParsedNumber | None:
    """Read ``text`` as one number with an optional unit, or return ``None``.

    Example:
        >>> str(parse_number(" 3,420 ")), str(parse_number("82%")), str(parse_number("-1.2E3"))
        ('3420', '82%', '-1200')
        >>> str(parse_number("$19.5 million")), str(parse_number("12.8 tCO2e"))
        ('19500000 $', '12.8 tco2 e')
        >>> parse_number("1 and 2") is None, parse_number("Scope 1") is None
        (True, True)
    """
    text = prepare(text)
    if len(text) > MAX_NUMBER_TEXT:
        return None
    found = _WHOLE_NUMBER.fullmatch(text)
    if found is None:
        return None
    value = _decimal(found["sign"], found["digits"], found["exponent"])
    if value is None:
        return None
    rest = found["rest"]
    if rest.lstrip().startswith("+"):
        return None  # "5+" is five or more
    percent = _PERCENT_WORD.match(rest)
    if percent is not None:
        rest = rest[percent.end() :]
    scale = _SCALE_WORD.match(rest)
    if scale is not None:
        value = _DECIMAL_CONTEXT.multiply(value, SCALE_WORDS[scale["scale"]])
        rest = rest[scale.end() :]
    unit_words = _words_after_number(rest)
    if len(unit_words) > 3 or any(
        word in _NOT_A_UNIT or word in _BOUNDS_AFTER or is_number_word(word) for word in unit_words
    ):
        return None
    if len(unit_words) > 1 and any(map(_is_stop_word, unit_words)):
        # "82% of sites" and "12 sites were audited" are phrases about the number, not
        # units: read as sentences, whose unit ends at the first stop word.
        return None
    currency = found["currency"] or found["currency_after_sign"]
    unit = " ".join([*([currency] if currency else []), *unit_words])
    return ParsedNumber(value, percent=percent is not None, unit=unit, scaled=scale is not None)


def _words_after_number(text: str) -> list[str]:
    """The normal form of the words after a number, a unit spelling at their start made
    canonical ("25.0 degrees Celsius" is 25.0 c: normalised apart from the number, the
    spelling rule could not see the digit before it)."""
    words = normal_forms(text).joined
    if any(hint in words for hint in UNIT_HINTS):
        words = UNIT_SPELLING_FIRST.sub(lambda found: UNIT_CANONICAL[found.group()], words)
    return words.split()


def is_number_word(word: str) -> bool:
    """Whether a word of a normal form is a plain number: digits, one point, a sign.

    Example:
        >>> is_number_word("-12.5"), is_number_word("1.2.3"), is_number_word("scope1")
        (True, False, False)
    """
    return word.lstrip("-").replace(".", "", 1).isdigit()


def _is_stop_word(word: str) -> bool:
    # NLTK's list holds the letters of contractions ("t", "s", "m", "d"): after a number
    # they are tonnes, seconds, metres and days.
    return len(word) > 1 and word in ENGLISH_STOP_WORDS


@dataclass(frozen=True)
class NumberInText:
    """A number found in a longer text (see :func:`numbers_in_text`).

    Attributes:
        number: The number, with its unit, or ``None`` when its digits cannot be read in
            full (more than :data:`MAX_DIGITS`).
        bounded: The text bounds or negates it ("not 5", "less than 5", "5+").
        label: It numbers a thing rather than counting or measuring one ("ISO 14001",
            "Scope 3", "SDG 13", "fiscal year 2022": after one of :data:`LABEL_WORDS`).
    """

    number: ParsedNumber | None
    bounded: bool
    label: bool = False


#: Words after which a number is a label ("Scope 3"), not a quantity.
LABEL_WORDS = frozenset(
    {"scope", "category", "iso", "sdg", "tier", "phase", "level", "article", "section"}
    | {"page", "pages", "table", "figure", "chapter", "annex", "appendix", "version", "goal"}
    | {"cop", "step", "item", "class", "grade", "type", "model", "unit", "building", "site"}
    | {"year", "fy"}
)


#: Most numbers :func:`numbers_in_text` reads from one text.
MAX_NUMBERS_IN_TEXT = 50


def numbers_in_text(text: str) -> tuple[NumberInText, ...] | None:
    """Every number in a text, in order, each with what it is a number of; ``None`` for a
    text of more than :data:`MAX_NUMBERS_IN_TEXT` numbers.

    Read with each number: a sign and currency symbol before it, percent and scale words
    after it, and as its unit the words that follow up to the first stop word or number
    (at most three: "12 kg of flour" is 12 kg, "12 sites were audited" 12 sites). A number
    that the text bounds or negates ("not 5", "isn't 5", "less than 5", "up to 5", "5 at
    most", ">5", "5+", "82% or more") is marked ``bounded``.

    Example:
        >>> [str(found.number) for found in numbers_in_text("In 2020, 82% of 120 sites.")]
        ['2020', '82%', '120 sites']
        >>> [found.bounded for found in numbers_in_text("not 5, but 6")]
        [True, False]
    """
    text = prepare(text)
    found_numbers: list[NumberInText] = []
    for found in _NUMBER_IN_TEXT.finditer(text):
        if len(found_numbers) == MAX_NUMBERS_IN_TEXT:
            return None
        found_numbers.append(_read_number_in_text(text, found))
    return tuple(found_numbers)


def _read_number_in_text(text: str, found: re.Match[str]) -> NumberInText:
    value = _decimal(found["sign"], found["digits"], found["exponent"])
    if value is None:
        return NumberInText(None, bounded=False)
    if found["scale"]:
        value = _DECIMAL_CONTEXT.multiply(value, SCALE_WORDS[found["scale"].strip()])
    before = tuple(normal_forms(text[: found.start()]).joined.split()[-3:])
    after = _words_after_number(text[found.end() :])
    label = bool(before) and before[-1] in LABEL_WORDS and not found["sign"]
    bounded = bool(
        _BOUNDS_BEFORE.intersection(before[-2:])
        or any(before[-len(phrase) :] == phrase for phrase in _BOUNDING_PHRASES_BEFORE)
        or _NOT_A_UNIT.intersection(after[:1])
        or _BOUNDS_AFTER.intersection(after[:1])
        or tuple(after[:2]) in _BOUNDING_PAIRS_AFTER
        or text[: found.start()].rstrip().endswith(BOUND_SYMBOLS)
        or text[found.end() :].lstrip().startswith("+")
    )
    unit_words = []
    # A percent is its own unit: "15% compared with" is 15%, not 15% "compared".
    for word in after[:3] if not found["percent"] else ():
        if _is_stop_word(word) or is_number_word(word):
            break
        unit_words.append(word)
    unit = " ".join([*([found["currency"]] if found["currency"] else []), *unit_words])
    number = ParsedNumber(
        value, percent=bool(found["percent"]), unit=unit, scaled=bool(found["scale"])
    )
    return NumberInText(number, bounded, label)


def find_single_number(text: str) -> ParsedNumber | None:
    """The only number in a longer text, with what it is a number of, else ``None``.

    Used for ``Int`` and ``Float`` answers given as a sentence; read as
    :func:`numbers_in_text` reads it, so that a unit, as in a short answer, must agree
    with the reference's. A number that a sentence bounds or negates is not its answer:
    ``None``.

    Example:
        >>> str(find_single_number("About 82 percent of sites were audited."))
        '82%'
        >>> str(find_single_number("It weighs 12 kg."))
        '12 kg'
        >>> find_single_number("In 2020, 82% of sites were audited.") is None
        True
        >>> find_single_number("It is less than 5.") is None
        True
    """
    text = prepare(text)
    found = None
    for candidate in _NUMBER_IN_TEXT.finditer(text):
        if found is not None:
            return None
        found = candidate
    if found is None:
        return None
    single = _read_number_in_text(text, found)
    return None if single.bounded else single.number


#: Scale words a question may name, as :func:`scale_named` reads them.
_QUESTION_SCALE = re.compile(rf"\b(?:{REPORTING_SCALE_PATTERN})\b")


def scale_named(question: str | None) -> Decimal | None:
    """The one scale word a question names ("in millions", "how many million hectares"),
    as a factor; ``None`` when it names none or several.

    Example:
        >>> scale_named("How many million hectares are forest?")
        Decimal('1000000')
        >>> scale_named("What was the revenue?") is None
        True
    """
    if not isinstance(question, str) or len(question) > MAX_QUESTION_TEXT:
        return None
    named = {singular_scale(word) for word in _QUESTION_SCALE.findall(prepare(question))}
    if len(named) != 1:
        return None
    return SCALE_WORDS[named.pop()]


#: Longest question read for a scale word.
MAX_QUESTION_TEXT = 5_000


def numbers_match(
    first: ParsedNumber,
    second: ParsedNumber,
    *,
    tolerance: Decimal,
    relative_tolerance: Decimal | None = None,
    percent_as_fraction: bool = False,
    scale: Decimal | None = None,
) -> bool:
    """Whether two numbers are the same answer.

    Units must agree when both numbers have one (a percent counts as the unit
    ``percent``); a bare number agrees with any unit, as a model often drops it
    (``"82.0"`` for ``"82%"``). Values agree when ``|a - b| <= max(tolerance,
    relative_tolerance * max(|a|, |b|))``. With ``percent_as_fraction``, a percent and a
    bare number also agree when the bare number times 100 does (``"82%"``, ``"0.82"``).
    With a ``scale`` (the one a question names, :func:`scale_named`), a number written
    without a scale word also stands for itself times the scale (``"26"`` is also 26
    million when the question asks "in millions").

    Example:
        >>> tolerance = Decimal("0.01")
        >>> numbers_match(parse_number("12.8"), parse_number("12.81"), tolerance=tolerance)
        True
        >>> numbers_match(parse_number("1.3%"), parse_number("13%"), tolerance=tolerance)
        False
    """
    first_unit = _unit_of(first)
    second_unit = _unit_of(second)
    if first_unit and second_unit and first_unit != second_unit:
        return False
    values = [(first.value, second.value)]
    if percent_as_fraction and first.percent != second.percent:
        bare, percent = (second, first) if first.percent else (first, second)
        if not _unit_of(bare):
            values.append((percent.value, _DECIMAL_CONTEXT.multiply(bare.value, Decimal(100))))
    if scale is not None:
        if not first.scaled:
            values.append((_DECIMAL_CONTEXT.multiply(first.value, scale), second.value))
        if not second.scaled:
            values.append((first.value, _DECIMAL_CONTEXT.multiply(second.value, scale)))
    return any(
        _within(a, b, tolerance=tolerance, relative_tolerance=relative_tolerance) for a, b in values
    )


def _unit_of(number: ParsedNumber) -> str:
    return " ".join(filter(None, ["percent" if number.percent else "", number.unit]))


def _within(
    first: Decimal, second: Decimal, *, tolerance: Decimal, relative_tolerance: Decimal | None
) -> bool:
    difference = abs(_DECIMAL_CONTEXT.subtract(first, second))
    allowed = tolerance
    if relative_tolerance is not None:
        scale = max(abs(first), abs(second))
        allowed = max(allowed, _DECIMAL_CONTEXT.multiply(relative_tolerance, scale))
    return difference <= allowed
