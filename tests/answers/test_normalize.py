"""Text normal forms and numbers: each step, both hyphen readings, exact decimals."""

from __future__ import annotations

import sys
import unicodedata
from decimal import Decimal

import pytest

from opik_semantic_metrics.answers.normalize import CURRENCY_SIGNS, normal_forms
from opik_semantic_metrics.answers.numbers import (
    find_single_number,
    number_from_value,
    numbers_match,
    parse_number,
)
from opik_semantic_metrics.answers.spelled_numbers import digits_for_words

TOLERANCE = Decimal("0.01")


@pytest.mark.parametrize(
    ("text", "joined", "spaced"),
    [
        ("Net-Zero", "netzero", "net zero"),
        ("co2-eq", "co2eq", "co2 eq"),
        ("1-2", "1 2", "1 2"),  # between digits a hyphen separates
        ("-5 and 3-4", "-5 and 3 4", "-5 and 3 4"),  # a sign is kept
        ("U.S. policy", "us policy", "us policy"),
        ("3.14 and 3,420 and 1,2345", "3.14 and 3420 and 1 2345", "3.14 and 3420 and 1 2345"),
        ("82% of sites", "82 % of sites", "82 % of sites"),
        ("12kWh", "12 kwh", "12 kwh"),
        ("$5 vs \u20ac5", "$ 5 vs \u20ac 5", "$ 5 vs \u20ac 5"),
        ("The  Paris\tAgreement ", "paris agreement", "paris agreement"),
        ("a, b", "a b", "a b"),  # an article before one letter stays
        ("it's the company's", "its the companys", "its the companys"),
        ("snake_case", "snake case", "snake case"),
        ("\u2018single\u2019 \u2014 dash", "single dash", "single dash"),
        ("!!!", "", ""),
    ],
)
def test_normal_forms(text, joined, spaced):
    forms = normal_forms(text)
    assert (forms.joined, forms.spaced) == (joined, spaced)


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("82 percent", "82 per cent"),
        ("82 pct", "82%"),
        ("20 degrees Celsius", "20 \u2103"),  # NFKC turns the one-character ℃ into °C
        ("68 degrees Fahrenheit", "68\u00b0F"),
        ("5 kilowatt hours", "5kWh"),
        ("1 gigawatt-hour", "1 GWh"),
    ],
)
def test_unit_spellings_meet(first, second):
    assert normal_forms(first).equals(normal_forms(second))


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("1e-3", "1e3"),  # an exponent's sign is a sign, not a hyphen after a letter
        ("2.5E-6", "2.5e6"),
        ("1e-3, 2", "1e3, 2"),
        (".5", "5"),  # a point before the first digit is a decimal point
        ("$.5", "$5"),
        ("- 5", "5"),  # a leading sign apart from its number is still a sign
        ("10\u00b2", "102"),  # a superscript after a digit is an exponent, not a digit
        ("10\u207b\u00b3", "10-3"),
        ("\u20a95", "\u20bd5"),  # every currency sign is kept: won is not rouble
        ("\u20ba5", "5"),
    ],
)
def test_different_numbers_keep_different_normal_forms(first, second):
    assert not normal_forms(first).equals(normal_forms(second))


@pytest.mark.parametrize(
    ("first", "second"),
    [("- 5", "-5"), ("$ .5", "$.5"), ("10^2", "10\u00b2"), ("\u20a9 5", "\u20a95")],
)
def test_one_number_written_two_ways_meets(first, second):
    assert normal_forms(first).equals(normal_forms(second))


def test_every_currency_sign_is_kept():
    """The kept signs are Unicode's currency signs (category Sc) that NFKC leaves as they
    are; the others (fullwidth $, \u20a8 = "Rs") become one of them or letters."""
    signs = {
        character
        for character in map(chr, range(sys.maxunicode + 1))
        if unicodedata.category(character) == "Sc"
        and unicodedata.normalize("NFKC", character) == character
    }
    assert set(CURRENCY_SIGNS) == signs


@pytest.mark.parametrize(
    ("text", "value", "percent", "unit"),
    [
        ("82", "82", False, ""),
        ("82.0", "82.0", False, ""),
        ("82%", "82", True, ""),
        ("82 per cent", "82", True, ""),
        ("-1.5e-3", "-0.0015", False, ""),
        ("+7", "7", False, ""),
        ("\u22127", "-7", False, ""),
        ("3,420,000", "3420000", False, ""),
        (".25", "0.25", False, ""),
        ("19.5 million", "19500000", False, ""),
        ("2 bn", "2000000000", False, ""),
        ("$12", "12", False, "$"),
        ("-$12", "-12", False, "$"),
        ("\u20a95,000", "5000", False, "\u20a9"),
        ("-.5", "-0.5", False, ""),
        ("12.8 tCO2e", "12.8", False, "tco2 e"),
        ("25\u00b0C", "25", False, "c"),
        ("5 kWh per year", "5", False, "kwh per year"),
    ],
)
def test_parse_number(text, value, percent, unit):
    number = parse_number(text)
    assert number is not None
    assert (number.value, number.percent, number.unit) == (Decimal(value), percent, unit)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "Scope 1",
        "1 and 2",
        "1 to 2",
        "more than 5",
        "5 or more",
        "12,8",  # decimal comma: not read, by design
        "1 2",
        "3 apples and 2 pears",
        "five words of unit after it",
        "1" * 61,  # more digits than any answer has
        "7 " + "x" * 200,  # too long to be one number
        "nan",
        "inf",
        "10\u00b2",  # 10 squared, not 102
    ],
)
def test_not_one_number(text):
    assert parse_number(text) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The share is 82 percent.", "82%"),
        ("Emissions were 3,420 tonnes", "3420 tonnes"),
        ("about -2.5", "-2.5"),
        ("It rose to 1.2e3 in total.", "1200"),
        ("19.5 million tonnes", "19500000 tonnes"),
        ("It weighs 12 kg of flour.", "12 kg"),  # the unit ends at a stop word
        ("The change was -$5 million.", "-5000000 $"),
        ("CO2 intensity 0.4", "0.4"),  # the 2 of CO2 is part of a word
    ],
)
def test_find_single_number(text, expected):
    assert str(find_single_number(text)) == expected


@pytest.mark.parametrize(
    "text",
    [
        "no number here",
        "In 2019 and 2020",
        "1.2.3",
        "",
        # A bound or a negation is not the number.
        "Not 5.",
        "It is less than 5.",
        "at least 3 sites",
        "82% or more of sites",
    ],
)
def test_find_single_number_needs_exactly_one(text):
    assert find_single_number(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "1e99999",  # an exponent of more than 4 digits is not read: no number, not 1
        "1e10000",
        "1e99999-x",
        "It was 1e99999 tonnes.",
        "1e-12345",  # nor its exponent: not 12345
        "The rate is 2.5E+12345 per year.",
        "1_000",  # an underscore separates, as a space does: not 1000, and not 1
        "about 1_000 sites",
        "1920x1080",  # a size or product is not its first factor with a unit "x1080"
        "a 2x4 board",
        "0x10",  # hexadecimal: not 0
        "0xff",
    ],
)
def test_a_number_is_read_in_full_or_not_at_all(text):
    assert parse_number(text) is None
    assert find_single_number(text) is None


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("1e9999", "1e+9999"),
        ("-1.5e-9999", "-1.5e-9999"),
        ("2.5e9999%", "2.5e+9999%"),
        ("1e59", "1" + "0" * 59),  # as many digits as an answer may have: written out
        ("1e-59", "0." + "0" * 58 + "1"),
    ],
)
def test_a_number_too_long_to_write_out_is_shown_with_an_exponent(text, shown):
    assert str(parse_number(text)) == shown


@pytest.mark.parametrize(
    ("text", "expected"),
    [("3x", "3 x"), ("10xa", "10 xa"), ("0.0xf", "0 xf"), ("3XL", "3 xl"), ("5m2", "5 m2")],
)
def test_a_unit_glued_to_a_number_is_still_a_unit(text, expected):
    assert str(parse_number(text)) == expected


def test_number_from_value_keeps_the_float_that_was_written():
    assert number_from_value(0.1).value == Decimal("0.1")
    assert number_from_value(82).value == Decimal(82)
    assert number_from_value(10**60) is None


@pytest.mark.parametrize(
    ("first", "second", "options", "expected"),
    [
        ("12.8", "12.81", {}, True),  # exactly 0.01: decimals, not binary floats
        ("12.8", "12.8100001", {}, False),
        ("100", "101", {}, False),
        ("100", "101", {"relative_tolerance": Decimal("0.01")}, True),
        ("100", "102", {"relative_tolerance": Decimal("0.01")}, False),
        # Relative to the larger magnitude (5% of 1052 is 52.6, of 1000 only 50), in
        # either order, and not beyond it (5% of 1053 is 52.65 < 53).
        ("1052", "1000", {"relative_tolerance": Decimal("0.05")}, True),
        ("1000", "1052", {"relative_tolerance": Decimal("0.05")}, True),
        ("-1052", "-1000", {"relative_tolerance": Decimal("0.05")}, True),
        ("1053", "1000", {"relative_tolerance": Decimal("0.05")}, False),
        ("82%", "0.82", {}, False),
        ("82%", "0.82", {"percent_as_fraction": True}, True),
        ("82%", "0.8", {"percent_as_fraction": True}, False),
        ("82%", "82", {}, True),  # a bare number agrees with any unit
        ("82%", "82 kg", {}, False),
        ("5 kg", "5 kg", {}, True),
        ("$5", "5", {}, True),
    ],
)
def test_numbers_match(first, second, options, expected):
    assert (
        numbers_match(parse_number(first), parse_number(second), tolerance=TOLERANCE, **options)
        is expected
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("the sixteenth president", "the 16th president"),
        ("the twenty-first century", "the 21st century"),
        ("one hundred and first", "101st"),
        ("the hundredth time", "the 100th time"),
        ("twelfth night, the ninety-second", "12th night, the 92nd"),
        ("It took one second.", "It took one second."),  # a time: "one second" is no ordinal
        ("Firstly, secondly", "Firstly, secondly"),  # whole words only
    ],
)
def test_ordinal_words_are_written_in_digits(text, expected):
    assert digits_for_words(text) == expected
