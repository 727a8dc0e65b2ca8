"""Dates read from text, and AnswerMatch finding a gold date however an output writes it.

Expected values are what the calendar says and what a person grading the answer would
decide, fixed before the code ran.
"""

from __future__ import annotations

import pytest

from opik_semantic_metrics.answers import tiers
from opik_semantic_metrics.answers.dates import (
    CalendarDate,
    may_name_date,
    read_date,
    read_dates,
)
from opik_semantic_metrics.answers.tiers import AnswerMatcher


@pytest.fixture(scope="module")
def matcher() -> AnswerMatcher:
    return AnswerMatcher()


def dates_in(text: str) -> list[tuple[str, str]]:
    return [(str(found.date), found.text) for found in read_dates(text)]


# --- the reader ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The song was released on 3 March 1999.", [("1999-03-03", "3 March 1999")]),
        ("It premiered on March 3rd, 1999.", [("1999-03-03", "March 3rd, 1999")]),
        ("It premiered on March 3rd 1999.", [("1999-03-03", "March 3rd 1999")]),
        ("It ended on September 2, 1945.", [("1945-09-02", "September 2, 1945")]),
        ("It ended on Sept. 2, 1945.", [("1945-09-02", "Sept. 2, 1945")]),
        ("It ended on Sep 2 1945.", [("1945-09-02", "Sep 2 1945")]),
        ("On the 3rd of March, 1999.", [("1999-03-03", "3rd of March, 1999")]),
        ("On the 21st of May", [("May 21", "21st of May")]),
        ("In March 1999.", [("1999-03", "March 1999")]),
        ("In March, 1999.", [("1999-03", "March, 1999")]),
        ("On 3 March.", [("March 3", "3 March")]),
        ("On Dec 25th.", [("December 25", "Dec 25th")]),
        ("Logged 1999-03-03 at noon.", [("1999-03-03", "1999-03-03")]),
        ("MARCH 3, 1999", [("1999-03-03", "MARCH 3, 1999")]),
        ("march 3, 1999", [("1999-03-03", "march 3, 1999")]),  # no capitals anywhere
        # Two dates, in order.
        (
            "From 4 July 1776 to Jan. 1, 1800.",
            [("1776-07-04", "4 July 1776"), ("1800-01-01", "Jan. 1, 1800")],
        ),
        # February 29 is a day only in a leap year; without a year it may be one.
        ("February 29, 2000", [("2000-02-29", "February 29, 2000")]),
        ("February 29", [("February 29", "February 29")]),
    ],
)
def test_dates_are_read_in_every_order(text, expected):
    assert dates_in(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "It may be 1999.",  # the verb, lower case in a text with capitals
        "We march 3 miles to Mars.",  # lower case "march" in a text with capitals
        "March",  # a month alone is no date
        "In 1999.",
        "03/04/1999",  # day or month first is a guess
        "3/4/1999",
        "32 March 1999",  # no 32nd: nothing is read, not even "March 1999"
        "February 30",
        "February 29, 2001",  # 2001 was no leap year
        "April 31st",
        "1999-13-01",  # no 13th month
        "1999-02-30",
        "the 1990s",
        "March 3.5 million",  # a decimal is no day
        "Marshall 3, 1999",  # a word that begins with a month
        "It was 0 March 1999.",
    ],
)
def test_what_is_no_date_reads_as_nothing(text):
    assert read_dates(text) == []


def test_the_dot_of_an_abbreviation_is_read_only_before_a_number():
    assert dates_in("On 2 Sept. It rained.") == [("September 2", "2 Sept")]
    assert dates_in("On 21st May. Then June.") == [("May 21", "21st May")]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("March 3, 1999", CalendarDate(1999, 3, 3)),
        ("3 March 1999", CalendarDate(1999, 3, 3)),
        ("1999-03-03", CalendarDate(1999, 3, 3)),
        ("the 3rd of March, 1999", CalendarDate(1999, 3, 3)),
        ("may 1999", CalendarDate(1999, 5, None)),  # a gold is read in any case
        ("Sept. 2, 1945.", CalendarDate(1945, 9, 2)),  # the punctuation around it ignored
        ("20th July", CalendarDate(None, 7, 20)),
        ("1999", None),  # a bare year is a number
        ("March", None),
        ("March 3, 1999 or March 4, 1999", None),  # two dates
        ("Born March 3, 1999", None),  # a date and more
        ("February 30", None),
        ("Mayor of London", None),
    ],
)
def test_a_gold_is_read_as_one_date_and_nothing_more(text, expected):
    assert read_date(text) == expected


def test_a_date_agrees_with_a_gold_on_every_field_the_gold_gives():
    day = CalendarDate(1999, 3, 3)
    assert day.agrees_with(CalendarDate(1999, 3, None))  # more precise: agrees
    assert day.agrees_with(CalendarDate(None, 3, 3))
    assert not CalendarDate(1999, 3, None).agrees_with(day)  # less precise: does not
    assert not CalendarDate(2000, 3, 3).agrees_with(day)
    assert not CalendarDate(1999, 3, 4).agrees_with(day)
    assert CalendarDate(1999, 3, 4).as_precise_as(day)
    assert not CalendarDate(None, 3, 4).as_precise_as(day)
    assert [str(day), str(CalendarDate(1999, 3, None)), str(CalendarDate(None, 3, 3))] == [
        "1999-03-03",
        "1999-03",
        "March 3",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("March 3, 1999", True),
        ("1999-03-03", True),
        ("sept 2", True),
        ("Paris", False),
        ("1999", False),
        ("82%", False),
    ],
)
def test_the_cheap_look_before_reading_a_gold(text, expected):
    assert may_name_date(text) is expected


def test_golds_without_a_month_are_never_read_as_dates(matcher, monkeypatch):
    calls: list[str] = []

    def counting(text: str) -> CalendarDate | None:
        calls.append(text)
        return None

    monkeypatch.setattr(tiers, "read_date", counting)
    matcher.match("The capital of France is Paris.", "Paris")
    matcher.match("It was in 1999, I think.", "1999")
    assert calls == []
    matcher.match("It was in March 1999.", "March 1999")
    assert calls == ["March 1999"]


# --- AnswerMatch: the gold date found ------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "gold", "shown"),
    [
        ("The song was released on 3 March 1999.", "March 3, 1999", "3 March 1999"),
        ("It premiered on March 3rd, 1999.", "March 3, 1999", "March 3rd, 1999"),
        ("It ended on September 2, 1945.", "2 September 1945", "September 2, 1945"),
        ("It ended on Sept. 2, 1945.", "2 September 1945", "Sept. 2, 1945"),
        ("It ended on the 2nd of September, 1945.", "Sept 2, 1945", "2nd of September, 1945"),
        ("Logged on 1945-09-02.", "September 2, 1945", "1945-09-02"),  # ISO against words
        ("It ended on 2 September 1945.", "1945-09-02", "2 September 1945"),  # and back
        ("It was on March 3, 1999.", "March 1999", "March 3, 1999"),  # the output says more
        ("Armstrong walked on the Moon on July 20, 1969.", "20th July", "July 20, 1969"),
        ("The final was played in May 1999.", "May 1999", "May 1999"),
        # A second date, but in another sentence of a short output.
        (
            "It was released on 3 March 1999. A remaster followed on 5 May 2005.",
            "March 3, 1999",
            "3 March 1999",
        ),
    ],
)
def test_a_gold_date_is_found_however_the_output_writes_it(matcher, output, gold, shown):
    result = matcher.match(output, gold)
    assert (result.matched, result.method) == (True, "contains"), result.reason
    assert result.reason.endswith(f"is found in the output as {shown!r}.")


def test_the_reason_names_the_gold_date(matcher):
    result = matcher.match("It premiered on March 3rd, 1999.", "3 March 1999")
    assert result.reason == "The gold date 1999-03-03 is found in the output as 'March 3rd, 1999'."


def test_a_date_the_question_names_is_no_second_answer(matcher):
    output = "It happened on March 3, 1999, two days after March 1, 1999."
    assert not matcher.match(output, "March 3, 1999").matched
    question = "What happened two days after March 1, 1999?"
    assert matcher.match(output, "March 3, 1999", question=question).matched


def test_a_long_output_is_searched_in_its_lead(matcher):
    filler = "The band toured widely and the record sold well in many countries. " * 8
    lead = "The song was released on 3 March 1999. "
    assert matcher.match(lead + filler, "March 3, 1999").matched
    late = matcher.match(filler + lead, "March 3, 1999")
    assert not late.matched
    assert late.flags == ("output_too_long",)


# --- AnswerMatch: what is not the gold date ------------------------------------------------


@pytest.mark.parametrize(
    ("output", "gold"),
    [
        ("It was released in March 1999.", "3 March 1999"),  # less precise
        ("It was released on March 3, 2000.", "3 March 1999"),  # another year
        ("It was released on 4 March 1999.", "3 March 1999"),  # another day
        ("It was released in 1999.", "3 March 1999"),  # the year only
        ("It may be 1999.", "May 1999"),  # the verb "may"
        ("it may be 1999", "May 1999"),
        ("It was on 03/04/1999.", "March 4, 1999"),  # a slash date is not read
        ("It was on 32 March 1999.", "3 March 1999"),
        ("3 or 4 March 1999", "3 March 1999"),  # the hedge reads as "4 March 1999"
    ],
)
def test_another_date_does_not_match(matcher, output, gold):
    result = matcher.match(output, gold)
    assert not result.matched, result.reason
    assert result.flags == ()


@pytest.mark.parametrize(
    ("output", "gold", "flag"),
    [
        ("It was not on 3 March 1999.", "March 3, 1999", "gold_negated"),
        ("March 3rd, 1999? No.", "March 3, 1999", "gold_negated"),
        ("It happened before March 3, 1999.", "March 3, 1999", "gold_negated"),
        ("It was signed prior to 3 March 1999.", "March 3, 1999", "gold_negated"),
        ("3 or 4 March 1999", "4 March 1999", "second_answer"),
        ("March 3, 1999 or March 4, 1999", "March 3, 1999", "second_answer"),
        ("It was either 3 March 1999 or 4 March 1999.", "March 3, 1999", "second_answer"),
        ("It was on March 3, 1999 or perhaps March 4, 1999.", "3 March 1999", "second_answer"),
        ("March 1999 or April 1999", "March 1999", "second_answer"),
        ("31 December 2022/30 June 2022", "31 December 2022", "second_answer"),
        # A second date as precise as the gold, in its sentence.
        ("Born on March 14, 1879 and died on April 18, 1955.", "March 14, 1879", "second_answer"),
    ],
)
def test_the_guards_of_the_text_search_hold_for_dates(matcher, output, gold, flag):
    result = matcher.match(output, gold)
    assert not result.matched, result.reason
    assert result.flags == (flag,)


def test_a_less_precise_second_date_is_no_second_answer(matcher):
    # "June 1999" is not as precise as the gold's day: it names no other day.
    result = matcher.match(
        "It was released on 3 March 1999 and charted by June 1999.", "3 March 1999"
    )
    assert result.matched, result.reason


def test_an_output_that_declines_does_not_stand_behind_a_date(matcher):
    output = (
        "As an AI language model, I cannot browse the internet or access real-time "
        "information, so I cannot be certain about this. However, based on what I know, "
        "the song was probably released on 3 March 1999, although you may want to check "
        "this with a reliable source such as the record label."
    )
    result = matcher.match(output, "March 3, 1999")
    assert not result.matched
    assert "output_abstained" in result.flags


# --- odd inputs ----------------------------------------------------------------------------


def test_odd_inputs_do_not_crash(matcher):
    assert matcher.match("", "March 3, 1999").flags == ("output_missing",)
    # An output that writes the mark dates stand for while it is split reads no date.
    assert not matcher.match("zqdatezq on 3 March 1999", "March 3, 1999").matched
    # An impossible date reads as no date: a gold that is none is searched as text.
    assert read_date("February 30") is None
    assert matcher.match("It was on February 30.", "February 30").method == "contains"
    # "32 March 1999" holds no date; the text search still finds the words "March 1999"
    # in it, as it did before dates were read.
    result = matcher.match("It was on 32 March 1999.", "March 1999")
    assert result.reason == "The gold answer 'march 1999' is found in the output."
