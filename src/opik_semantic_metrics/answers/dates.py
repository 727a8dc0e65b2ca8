"""Calendar dates read from English text, so that a gold date is found however an output
writes it: ``"March 3, 1999"``, ``"3 March 1999"`` and ``"1999-03-03"`` are one date.

LLM answers to "when" questions write dates in any order, with or without an ordinal
suffix or a comma, so comparing the texts misses most of them; comparing what the dates
say does not. :func:`read_dates` reads, in any text:

- a month by its name or its three-letter abbreviation, with or without a dot
  (``"Sep."``, ``"Sept"`` too);
- a day of one or two digits, with or without an ordinal suffix (``"3rd"``);
- a year of four digits, from 1000 to 2999;

in these orders: ``"March 3, 1999"``, ``"March 3rd 1999"``, ``"3 March 1999"``, ``"the
3rd of March, 1999"``, ``"March 1999"``, ``"March 3"``, ``"3 March"``, and ISO's
``"1999-03-03"``. A month alone is no date, and numeric dates with slashes
(``"03/04/1999"``) are not read: whether the day or the month comes first is a guess. A
day the month does not have (``"32 March 1999"``, ``"February 30"``) makes the whole
text no date: nothing is read from it. In a text that has capital letters, a month
counts only when it is capitalised ("it may be 1999" holds the verb, not the month); in
a text without capitals, every month name is read.
"""

from __future__ import annotations

import calendar
import functools
import re
from dataclasses import dataclass

#: The months, by name.
MONTHS = {name.lower(): number for number, name in enumerate(calendar.month_name) if name}
#: Month names and the abbreviations read as them ("May" is its own abbreviation).
MONTH_SPELLINGS = {
    **MONTHS,
    **{name[:3]: number for name, number in MONTHS.items()},
    "sept": 9,
}
_NAMES = "|".join(MONTHS)
_ABBREVIATIONS = "|".join(sorted(set(MONTH_SPELLINGS) - set(MONTHS)))
#: A month's name, or an abbreviation with an optional dot, taken only before a number
#: ("Sept. 2"): a dot before anything else ends the sentence.
_MONTH = rf"(?:(?:{_NAMES})\b|(?:{_ABBREVIATIONS})\b(?:\.(?=\s*\d))?)"
#: A day, with an optional ordinal suffix; not a piece of a longer number ("3.5").
_DAY = r"(?<![\w./])\d{1,2}(?:st|nd|rd|th)?(?!\w|\.\d)"
#: A year of four digits, not a piece of a longer number or a decade ("1990s").
_YEAR = r"[12]\d{3}(?!\w|[.,]\d)"
#: Between day and year, or month and year: a comma (spaces optional) or spaces.
_GAP = r"(?:\s*,\s*|\s+)"


def _group(name: str, pattern: str) -> str:
    return f"(?P<{name}>{pattern})"


#: The orders, as one pattern; each order has its own groups (m = month, d = day,
#: y = year, and the order's letter). A month after a number and a space is read only as
#: part of a day-first date ("32 March 1999" is none, not "March 1999").
_DATE = re.compile(
    "|".join(
        (
            # ISO 8601: 1999-03-03 (a month or day out of range is checked after).
            r"(?<![\w./-])(?P<yi>[12]\d{3})-(?P<mi>\d{2})-(?P<di>\d{2})(?![\w-]|[./]\d)",
            # Day first: 3 March 1999, 3rd of March, 1999, 3 March.
            _group("da", _DAY) + r"\s+(?:of\s+)?" + _group("ma", _MONTH)
            + rf"(?:{_GAP}" + _group("ya", _YEAR) + ")?",
            # Month first: March 3, 1999, March 3rd 1999, March 3.
            r"(?<!\d\s)" + _group("mb", _MONTH) + r"\s+" + _group("db", _DAY)
            + rf"(?:{_GAP}" + _group("yb", _YEAR) + ")?",
            # Month and year: March 1999, March, 1999.
            r"(?<!\d\s)" + _group("mc", _MONTH) + _GAP + _group("yc", _YEAR),
        )
    ),
    re.IGNORECASE,
)  # fmt: skip
#: The cheap look before reading a gold: a month's first three letters, or an ISO date.
_DATE_HINT = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)|\d{4}-\d\d-\d\d", re.IGNORECASE
)
_ENDS = " \t\n.,;:!?\"'()[]"
_LEADING_THE = re.compile(r"^the\s+", re.IGNORECASE)


@dataclass(frozen=True)
class CalendarDate:
    """A date as a text gives it: a month, and a day, a year or both.

    Attributes:
        year: The year, or ``None`` when the text gives none ("3 March").
        month: The month, 1 to 12.
        day: The day of the month, or ``None`` when the text gives none ("March 1999").
    """

    year: int | None
    month: int
    day: int | None

    def agrees_with(self, gold: CalendarDate) -> bool:
        """Whether this date says what ``gold`` says on every field ``gold`` gives: it
        may say more ("March 3, 1999" agrees with "March 1999"), never less.

        Example:
            >>> CalendarDate(1999, 3, 3).agrees_with(CalendarDate(1999, 3, None))
            True
            >>> CalendarDate(1999, 3, None).agrees_with(CalendarDate(1999, 3, 3))
            False
        """
        return (
            self.month == gold.month
            and (gold.year is None or self.year == gold.year)
            and (gold.day is None or self.day == gold.day)
        )

    def as_precise_as(self, gold: CalendarDate) -> bool:
        """Whether this date gives every field ``gold`` gives (a second date this precise
        that does not agree with the gold is a second answer)."""
        return (gold.year is None or self.year is not None) and (
            gold.day is None or self.day is not None
        )

    def __str__(self) -> str:
        """ISO 8601's form when the year is known (``"1999-03-03"``, ``"1999-03"``); the
        month's name and the day otherwise (``"March 3"``)."""
        if self.year is None:
            return f"{calendar.month_name[self.month]} {self.day}"
        if self.day is None:
            return f"{self.year:04d}-{self.month:02d}"
        return f"{self.year:04d}-{self.month:02d}-{self.day:02d}"


@dataclass(frozen=True)
class FoundDate:
    """A date read in a text, and where.

    Attributes:
        date: What it says.
        text: The text it was read from, as written ("March 3rd, 1999").
        start: Where that text begins in the text read.
        end: Where it ends.
    """

    date: CalendarDate
    text: str
    start: int
    end: int


def may_name_date(text: str) -> bool:
    """Whether ``text`` may hold a date: a cheap look (a month's first three letters as
    a word's start, or an ISO date) that spares most golds the reading.

    Example:
        >>> may_name_date("March 3, 1999"), may_name_date("1999"), may_name_date("Paris")
        (True, False, False)
    """
    return _DATE_HINT.search(text) is not None


def read_dates(text: str) -> list[FoundDate]:
    """Every date in ``text``, in order (see the module docstring for what is read).

    Example:
        >>> [str(found.date) for found in read_dates("From 3 March 1999 to Sept. 2, 2001.")]
        ['1999-03-03', '2001-09-02']
        >>> read_dates("It may be 1999, or 03/04/1999."), read_dates("32 March 1999")
        ([], [])
    """
    return _read(text, any_case=text.lower() == text)


@functools.lru_cache(maxsize=1024)
def read_date(text: str) -> CalendarDate | None:
    """``text`` read as one date, in any case ("march 3, 1999"), with a leading "the"
    and the punctuation around it ignored; ``None`` when it is not one date and nothing
    more.

    Example:
        >>> read_date("the 3rd of March, 1999"), read_date("1999-03-03")
        (CalendarDate(year=1999, month=3, day=3), CalendarDate(year=1999, month=3, day=3))
        >>> read_date("March 3, 1999 or March 4, 1999") is None, read_date("1999") is None
        (True, True)
    """
    stripped = _LEADING_THE.sub("", text.strip(_ENDS))
    found = _read(stripped, any_case=True)
    if len(found) != 1 or found[0].start != 0 or found[0].end != len(stripped):
        return None
    return found[0].date


def _read(text: str, *, any_case: bool) -> list[FoundDate]:
    found: list[FoundDate] = []
    for match in _DATE.finditer(text):
        date = _date_of(match, any_case=any_case)
        if date is not None:
            found.append(FoundDate(date, match.group(), match.start(), match.end()))
    return found


def _date_of(match: re.Match[str], *, any_case: bool) -> CalendarDate | None:
    """The date a match says, or ``None`` when it says none that exists (a day past the
    month's end, an ISO month past 12) or its month is a lower-case word in a text with
    capitals."""
    groups = match.groupdict()
    year: int | None
    day: int | None
    if groups["yi"] is not None:
        year, month, day = int(groups["yi"]), int(groups["mi"]), int(groups["di"])
        if not 1 <= month <= 12:
            return None
    else:
        letter = next(key[1] for key in ("ma", "mb", "mc") if groups[key] is not None)
        month_text = groups["m" + letter]
        if not any_case and month_text[0].islower():
            return None
        month = MONTH_SPELLINGS[month_text.rstrip(".").lower()]
        day_text = groups.get("d" + letter)
        year_text = groups["y" + letter]
        day = None if day_text is None else int(day_text.rstrip("stndrhSTNDRH"))
        year = None if year_text is None else int(year_text)
        if day is None:
            return CalendarDate(year, month, None)
    # A year unknown allows February 29 (2000 was a leap year).
    last = calendar.monthrange(2000 if year is None else year, month)[1]
    if not 1 <= day <= last:
        return None
    return CalendarDate(year, month, day)
