#!/usr/bin/env python3
"""Writes holdout.jsonl: labelled examples written after the detectors were tuned on
eval.jsonl and not used to tune them, so its figures are the less flattering, more honest
ones. Run from this directory: python3 make_holdout.py > holdout.jsonl
"""
import json

examples = []


def ex(text, *spans):
    for typ, span in spans:
        assert span in text, (text, span)
    examples.append({"text": text, "spans": [{"type": t, "text": s} for t, s in spans]})


# positives
ex("Sure, the card is 4532 0151 1283 0366, expiration nine twenty eight.", ("card", "4532 0151 1283 0366"))
ex("yeah um five four five four five four five four five four five four five four five four",
   ("card", "five four five four five four five four five four five four five four five four"))
ex("visa ending in... the whole number is 4916-3389-7601-2343 okay", ("card", "4916-3389-7601-2343"))
ex("it's 6011 5140 0000 0004, discover", ("card", "6011 5140 0000 0004"))
ex("my amex, 3714 496353 98431", ("card", "3714 496353 98431"))
ex("Number: 5425233430109903", ("card", "5425233430109903"))
ex("card 4 5 3 2 0 1 5 1 1 2 8 3 0 3 6 6 thanks", ("card", "4 5 3 2 0 1 5 1 1 2 8 3 0 3 6 6"))
ex("You can reach me at 303-555-0142 any time.", ("phone", "303-555-0142"))
ex("my cell's (917) 555 0134", ("phone", "(917) 555 0134"))
ex("call the front desk on +1-202-555-0178", ("phone", "+1-202-555-0178"))
ex("my number is two one two, five five five, zero one four seven", ("phone", "two one two, five five five, zero one four seven"))
ex("ring me on 0161 496 0000 tomorrow", ("phone", "0161 496 0000"))
ex("Mobile: +44 7700 900 077", ("phone", "+44 7700 900 077"))
ex("appelez le 04 72 10 30 30", ("phone", "04 72 10 30 30"))
ex("Telefon 089 12345678 bitte", ("phone", "089 12345678"))
ex("my number is 415 555 1234 extension 12", ("phone", "415 555 1234"))
ex("text me at 6505550111", ("phone", "6505550111"))
ex("it's oh seven seven double oh nine double oh one two three", ("phone", "oh seven seven double oh nine double oh one two three"))
ex("email me at alex.martin@northwind.com please", ("email", "alex.martin@northwind.com"))
ex("It's ALEX@EXAMPLE.NET", ("email", "ALEX@EXAMPLE.NET"))
ex("my email is chris dot evans at proton dot me", ("email", "chris dot evans at proton dot me"))
ex("the email is d underscore king at gmail dot com", ("email", "d underscore king at gmail dot com"))
ex("you can email tina at tinacakes dot com", ("email", "tina at tinacakes dot com"))
ex("send the invoice to billing@northwind-traders.com", ("email", "billing@northwind-traders.com"))
ex("it's sam dot lee at example dot org", ("email", "sam dot lee at example dot org"))
ex("my IBAN is DE44 5001 0517 5407 3249 31", ("iban", "DE44 5001 0517 5407 3249 31"))
ex("pay GB33BUKB20201555555555 by friday", ("iban", "GB33BUKB20201555555555"))
ex("IBAN: FR76 3000 6000 0112 3456 7890 189", ("iban", "FR76 3000 6000 0112 3456 7890 189"))
ex("my social is 524-33-1187", ("ssn", "524-33-1187"))
ex("social security number, three one two, four four, nine nine eight one",
   ("ssn", "three one two, four four, nine nine eight one"))
ex("SSN 412 56 7890", ("ssn", "412 56 7890"))

# hard negatives
ex("your order 4532 0151 1283 0367 is on its way")
ex("the total comes to 1,299.99 plus 85.50 shipping")
ex("we open at 9 and close at 17:30")
ex("flight 2231 leaves at 7 45")
ex("the package weighs 12 pounds 4 ounces")
ex("I was born in 1979, my brother in 1983")
ex("your confirmation code is 7781 2290")
ex("the ticket number is 0044 5566 7788")
ex("tracking 1Z999AA10123456784 is UPS")
ex("press 1 then 2 then 3")
ex("she lives at 1600 Amphitheatre Parkway, 94043")
ex("the part is 555-0123-A")
ex("look at acme dot com for the menu")
ex("we met at Starbucks at 3")
ex("invoice INV-2024-000123 is attached")
ex("DE44 5001 0517 5407 3249 32 was rejected")
ex("GB33 BUKB 2020 1555 5555 56")
ex("ssn-like 999-12-3456 is not valid")
ex("area 000-11-2222 is never issued")
ex("the account balance is 10 456 789")
ex("the years 2020 2021 2022 2023 2024")
ex("gate 4 terminal 1 seat 11 row 11 11 11")
ex("step one two three four five six seven eight nine ten")
ex("the code 4111 was correct")
ex("meeting room 0415 5550 123")
ex("five five five five five five five five five five five five five five five five")
ex("order number 415-555-0133 sorry I mean the order id")
ex("it's at 12 at the latest")
ex("call option at 3,000 strike")

print("\n".join(json.dumps(e, ensure_ascii=False) for e in examples))
