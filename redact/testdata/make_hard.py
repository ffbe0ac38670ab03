#!/usr/bin/env python3
"""Writes hard.jsonl and beyond.jsonl: labelled examples of the hard forms a transcript
gives, written after the detectors were tuned and never tuned on.

hard.jsonl is what the detectors claim to handle (docs/calls.md, "What is in scope"):
digits read one by one as words or figures, with "oh", "double" and "triple", grouped by
spaces, dashes, dots or commas, upper and lower case IBANs in groups, spoken addresses;
and hard negatives beside them. beyond.jsonl is what they do not claim: numbers broken by
filler words, mixed figures and words, "hundred", a number split by a correction. Its
figures are reported, never held to a floor.

Run from this directory: python3 make_hard.py
"""
import json

WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]


def spell(digits, zero="zero"):
    return " ".join(zero if c == "0" else WORDS[int(c)] for c in digits if c.isdigit())


def spaced(digits):
    return " ".join(c for c in digits if c.isdigit())


def ex(out, text, *spans):
    for typ, span in spans:
        assert span in text, (text, span)
    out.append({"text": text, "spans": [{"type": t, "text": s} for t, s in spans]})


hard, beyond = [], []

# cards read digit by digit, in words and in figures, spaced and dashed
ex(hard, "it's %s" % spell("4242424242424242"), ("card", spell("4242424242424242")))
ex(hard, "my mastercard is %s okay" % spell("5105105105105100", "oh"), ("card", spell("5105105105105100", "oh")))
ex(hard, "so the number is %s, expiry oh nine twenty nine" % spaced("6011000990139424"), ("card", spaced("6011000990139424")))
ex(hard, "card: 3566-0020-2036-0505", ("card", "3566-0020-2036-0505"))
ex(hard, "amex three seven eight two, eight two two four six three, one zero zero zero five",
   ("card", "three seven eight two, eight two two four six three, one zero zero zero five"))
ex(hard, "four zero zero zero, zero five six six, five five six six, five five five six",
   ("card", "four zero zero zero, zero five six six, five five six six, five five five six"))
ex(hard, "the card is double five double five double five double five double five double five double four double four",
   ("card", "double five double five double five double five double five double five double four double four"))
ex(hard, "Visa 4242.4242.4242.4242 please", ("card", "4242.4242.4242.4242"))
# card negatives: Luhn-invalid, a tracking number, counting, a date and a price
ex(hard, "the tracking number is 4242 4242 4242 4241")
ex(hard, "order 1234 5678 9012 3456 shipped")
ex(hard, "one two three four five six seven eight nine ten eleven twelve thirteen fourteen")
ex(hard, "it was 12 05 2024 at 10 30 and cost 1499 dollars")
ex(hard, "four two four two is my PIN, don't tell anyone")

# phones
ex(hard, "call me back on %s" % spell("4155550199"), ("phone", spell("4155550199")))
ex(hard, "my number is oh two oh, seven nine four six, oh nine five eight",
   ("phone", "oh two oh, seven nine four six, oh nine five eight"))
ex(hard, "reach her at plus four four seven seven double oh nine double oh one two three",
   ("phone", "plus four four seven seven double oh nine double oh one two three"))
ex(hard, "the office is 212.555.0187", ("phone", "212.555.0187"))
ex(hard, "text +33 6 12 34 56 78 tonight", ("phone", "+33 6 12 34 56 78"))
ex(hard, "it's 1 800 555 0199 toll free", ("phone", "1 800 555 0199"))
ex(hard, "the confirmation number is 4155550199")
ex(hard, "that's the account number 2125550187")
ex(hard, "room 415, floor 5, building 550")

# IBANs
ex(hard, "my IBAN is gb82 west 1234 5698 7654 32", ("iban", "gb82 west 1234 5698 7654 32"))
ex(hard, "FR14-2004-1010-0505-0001-3M02-606 is the account", ("iban", "FR14-2004-1010-0505-0001-3M02-606"))
ex(hard, "use NL91ABNA0417164300", ("iban", "NL91ABNA0417164300"))
ex(hard, "the reference GB82 WEST 1234 5698 7654 33 failed")  # wrong checksum
ex(hard, "DE89 3704 0044 0532 0130", )  # too short for DE

# SSNs
ex(hard, "social security number %s" % spell("219099999"), ("ssn", spell("219099999")))
ex(hard, "my SSN is 078 05 1120", ("ssn", "078 05 1120"))
ex(hard, "ssn: 123-45-6789", ("ssn", "123-45-6789"))
ex(hard, "the ZIP is 94105 1234 and routing 021000021")
ex(hard, "social security? I don't have it, the case number is 666-12-3456")

# e-mail
ex(hard, "my email is j dot doe at example dot org", ("email", "j dot doe at example dot org"))
ex(hard, "send it to Mary.Jones+billing@Example.CO.UK please", ("email", "Mary.Jones+billing@Example.CO.UK"))
ex(hard, "email address: peter underscore pan at neverland dot io", ("email", "peter underscore pan at neverland dot io"))
ex(hard, "I looked at google dot com yesterday")
ex(hard, "meet me at noon dot com is a website name I like")

# beyond: what the detectors do not claim (docs/calls.md)
ex(beyond, "four two four two um four two four two sorry four two four two four two four two",
   ("card", "four two four two um four two four two sorry four two four two four two four two"))
ex(beyond, "4242 four two four two 4242 4242", ("card", "4242 four two four two 4242 4242"))
ex(beyond, "four one five, five five five, oh one hundred", ("phone", "four one five, five five five, oh one hundred"))
ex(beyond, "forty two forty two forty two forty two forty two forty two forty two forty two",
   ("card", "forty two forty two forty two forty two forty two forty two forty two forty two"))
ex(beyond, "G B eight two W E S T one two three four five six nine eight seven six five four three two",
   ("iban", "G B eight two W E S T one two three four five six nine eight seven six five four three two"))
ex(beyond, "two one nine, oh nine, nine nine nine nine", ("ssn", "two one nine, oh nine, nine nine nine nine"))

for name, rows in (("hard.jsonl", hard), ("beyond.jsonl", beyond)):
    with open(name, "w") as f:
        for e in rows:
            f.write(json.dumps(e) + "\n")
