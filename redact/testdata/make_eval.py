#!/usr/bin/env python3
"""Writes eval.jsonl, the labelled set of TestDetectorQuality.

Every example is written out below by hand; this script only spells digits out ("four one
one …") and writes each labelled span as the exact text it covers, so that the labels and
the text cannot drift apart. Run it from this directory: python3 make_eval.py > eval.jsonl
"""
import json

WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]


def spell(digits, sep=" "):
    return sep.join(WORDS[int(c)] for c in digits if c.isdigit())


def spaced(digits):
    return " ".join(c for c in digits if c.isdigit())


examples = []


def ex(text, *spans):
    for typ, span in spans:
        assert span in text, (text, span)
    examples.append({"text": text, "spans": [{"type": t, "text": s} for t, s in spans]})


# ---- cards: positives -------------------------------------------------------------------
cards = ["4111111111111111", "4012888888881881", "5555555555554444", "2223003122003222",
         "6011111111111117", "3530111333300000", "6200000000000005", "4000056655665556",
         "5105105105105100", "3566002020360505", "4242424242424242", "6759649826438453"]
amex = ["378282246310005", "371449635398431"]


def g4(n, sep=" "):
    return sep.join(n[i:i + 4] for i in range(0, len(n), 4))


ex("my card number is %s" % cards[0], ("card", cards[0]))
ex("it's %s, expiry twelve twenty seven" % g4(cards[1]), ("card", g4(cards[1])))
ex("the number is %s and the code is 123" % g4(cards[2], "-"), ("card", g4(cards[2], "-")))
ex("Card: %s." % g4(cards[3]), ("card", g4(cards[3])))
ex("okay so it's %s" % spaced(cards[4]), ("card", spaced(cards[4])))
ex("yes it is %s thank you" % spell(cards[5]), ("card", spell(cards[5])))
ex("%s is my visa" % spell(cards[0]), ("card", spell(cards[0])))
ex("the amex is 3782 822463 10005", ("card", "3782 822463 10005"))
ex("amex %s expiring oh four twenty six" % amex[1], ("card", amex[1]))
ex("card ending... no the full one: %s" % g4(cards[6]), ("card", g4(cards[6])))
ex("diners card 3056 9309 0259 04 please", ("card", "3056 9309 0259 04"))
ex("the old visa 4222222222222 still works", ("card", "4222222222222"))
ex("read it back: four one one one, one one one one, one one one one, one one one one",
   ("card", "four one one one, one one one one, one one one one, one one one one"))
ex("it's four zero one two double eight double eight double eight double eight one eight eight one",
   ("card", "four zero one two double eight double eight double eight double eight one eight eight one"))
ex("Four Two Four Two Four Two Four Two Four Two Four Two Four Two Four Two",
   ("card", "Four Two Four Two Four Two Four Two Four Two Four Two Four Two Four Two"))
ex("charge %s for the order of 3 items" % g4(cards[7]), ("card", g4(cards[7])))
ex("mastercard %s, cvv 321, zip 94103" % g4(cards[8], "-"), ("card", g4(cards[8], "-")))
ex("jcb %s" % spaced(cards[9]), ("card", spaced(cards[9])))
ex("19 digits: 4111 1111 1111 1111 110", ("card", "4111 1111 1111 1111 110"))
ex("number %s, then %s" % (cards[10], g4(cards[11])), ("card", cards[10]), ("card", g4(cards[11])))
ex("uh it's %s um yeah" % spell(cards[2]), ("card", spell(cards[2])))
ex("pay with 4000 0566 5566 5556 please", ("card", "4000 0566 5566 5556"))
ex("card=5555555555554444;", ("card", "5555555555554444"))
ex("the card 6011 0009 9013 9424 expires 03/29", ("card", "6011 0009 9013 9424"))
ex("my new card is 3852 0000 0232 37", ("card", "3852 0000 0232 37"))

# ---- cards: hard negatives --------------------------------------------------------------
ex("the order number is 4111 1111 1111 1112")          # Luhn fails
ex("reference 1234 5678 9012 3456 for your records")    # Luhn fails
ex("tracking 9400 1000 0000 0000 0000 00 ships today")  # 22 digits, USPS
ex("i bought 4 items for 12 dollars on 11 12 2024")
ex("the total was 1,234,567.89 dollars")
ex("ISBN 978-0-306-40615-7 is the book")
ex("our account 0000 0000 0000 0001 is closed")
ex("please call between 9 and 5, monday to friday")
ex("the meeting is at 10:30 on 2024-05-12")
ex("seat 14 row 22 gate 7 flight 1234")
ex("invoice 2024 0001 2345 6789 is paid")
ex("four one one one one one one one one one one one one one one two")  # Luhn fails
ex("prices were 19.99, 24.99, 5.49 and 100.00")
ex("order 8812 3456 7890 1234 5678")
ex("I said one two three, testing, one two three")
ex("quantities 100 200 300 400 500 600 700")
ex("serial 7711 2233 4455 6677")
ex("it costs 4 1 1 dollars, that is four hundred and eleven")
ex("ticket 5555 5555 5555 5555 5")
ex("zip codes 94103 94105 94107 and 10001")

# ---- e-mail: positives ------------------------------------------------------------------
ex("my email is john.smith@example.com", ("email", "john.smith@example.com"))
ex("write to support+billing@acme.co.uk today", ("email", "support+billing@acme.co.uk"))
ex("it's J.Doe_42@mail-server.example.org.", ("email", "J.Doe_42@mail-server.example.org"))
ex("<anna@b.io>", ("email", "anna@b.io"))
ex("email: a.b@c.de, cc x@y.fr", ("email", "a.b@c.de"), ("email", "x@y.fr"))
ex("it's john dot smith at example dot com", ("email", "john dot smith at example dot com"))
ex("my email is jane at acme dot com", ("email", "jane at acme dot com"))
ex("sure, my e-mail address is mary underscore jones at gmail dot com",
   ("email", "mary underscore jones at gmail dot com"))
ex("the address is bob at company dot co dot uk", ("email", "bob at company dot co dot uk"))
ex("send it to peter dot parker at dailybugle dot net please", ("email", "peter dot parker at dailybugle dot net"))
ex("my email, it's tom99 at hotmail dot com", ("email", "tom99 at hotmail dot com"))
ex("contact j.smith at example.com", ("email", "j.smith at example.com"))
ex("email me at sarah dot connor at skynet dot io", ("email", "sarah dot connor at skynet dot io"))
ex("Mail: first.last@sub.domain.example", ("email", "first.last@sub.domain.example"))
ex("my mail is lisa at outlook dot com thanks", ("email", "lisa at outlook dot com"))
ex("reach our team at help@voice.example.com", ("email", "help@voice.example.com"))
ex("uh the email would be mark dash white at yahoo dot com", ("email", "mark dash white at yahoo dot com"))
ex("kim.lee@uni.edu and kim@home.net", ("email", "kim.lee@uni.edu"), ("email", "kim@home.net"))
ex("email is anna at mail dot de", ("email", "anna at mail dot de"))
ex("ok its rob at rob dot dev", ("email", "rob at rob dot dev"))

# ---- e-mail: hard negatives -------------------------------------------------------------
ex("I looked at google dot com yesterday")
ex("follow us @acmesupport on twitter")
ex("meet me at the office at 5")
ex("she works at amazon dot com as an engineer")
ex("visit www.example.com for details")
ex("we arrived at home dot dot dot it was late")
ex("the rate is 5@10 per unit")
ex("I'm at work right now, call me later")
ex("look at this dot point two")
ex("our site is acme dot com")
ex("user@localhost is not an address we use")
ex("he is at example dot com headquarters")
ex("the file is report.pdf at the top")
ex("we met at noon dot com bubble times")
ex("staying at the hilton dot in paris")

# ---- phone: positives -------------------------------------------------------------------
ex("call me at (415) 555-0123", ("phone", "(415) 555-0123"))
ex("my number is 415-555-0123", ("phone", "415-555-0123"))
ex("it's 415.555.0199 after six", ("phone", "415.555.0199"))
ex("reach me on 415 555 0176", ("phone", "415 555 0176"))
ex("the number is +1 415 555 0123", ("phone", "+1 415 555 0123"))
ex("dial +14155550123 now", ("phone", "+14155550123"))
ex("1-800-555-0199 is the hotline", ("phone", "1-800-555-0199"))
ex("my london number is 020 7946 0958", ("phone", "020 7946 0958"))
ex("mobile 07700 900123", ("phone", "07700 900123"))
ex("in the UK +44 20 7946 0958", ("phone", "+44 20 7946 0958"))
ex("mon numéro est 01 23 45 67 89", ("phone", "01 23 45 67 89"))
ex("portable 06 12 34 56 78 merci", ("phone", "06 12 34 56 78"))
ex("ou +33 6 12 34 56 78", ("phone", "+33 6 12 34 56 78"))
ex("Berlin 030 12345678", ("phone", "030 12345678"))
ex("Handy 0151 23456789", ("phone", "0151 23456789"))
ex("or +49 89 1234567", ("phone", "+49 89 1234567"))
ex("it's four one five five five five zero one two three", ("phone", "four one five five five five zero one two three"))
ex("call 4 1 5 5 5 5 0 1 2 3", ("phone", "4 1 5 5 5 5 0 1 2 3"))
ex("my cell is six five zero, five five five, zero one nine nine",
   ("phone", "six five zero, five five five, zero one nine nine"))
ex("the number is plus four four seven seven zero zero nine zero zero one two three",
   ("phone", "plus four four seven seven zero zero nine zero zero one two three"))
ex("call back on 4155550123", ("phone", "4155550123"))
ex("home (212) 555-0147, work (646) 555-0163", ("phone", "(212) 555-0147"), ("phone", "(646) 555-0163"))
ex("it's eight hundred five five five oh one nine nine", ("phone", "eight hundred five five five oh one nine nine"))  # missed: "hundred"
ex("my number is 555-0123", ("phone", "555-0123"))  # missed: seven-digit local number
ex("fax +1 (212) 555-0188", ("phone", "+1 (212) 555-0188"))
ex("oh two oh seven nine four six oh nine five eight is the office", ("phone", "oh two oh seven nine four six oh nine five eight"))

# ---- phone: hard negatives --------------------------------------------------------------
ex("order 4155550123 has shipped")
ex("invoice number 2125550147 is overdue")
ex("the total is $1,415,555.01")
ex("between 2019 and 2023 we grew")
ex("the code is 123 456")
ex("date 2024-05-12 time 14:30:00")
ex("zip 94103-1234")
ex("we need 12 13 14 15 units")
ex("room 415 floor 5 building 55")
ex("version 10.2.3 released")
ex("the meeting is on 12/05/2024 at 10:30")
ex("I have 3 kids aged 4 7 and 9")
ex("pin 1234, not 4321")
ex("tracking number 1234567890 arrives tomorrow")
ex("the answer is 42 and 7")
ex("confirmation 0123456789 sent")
ex("temperature 98.6 and pressure 120 over 80")
ex("one two three four five, said the kid")
ex("in 1999 2000 2001 we sold 150")
ex("chapter 11 section 3 page 255")

# ---- IBAN: positives --------------------------------------------------------------------
ex("IBAN GB82 WEST 1234 5698 7654 32", ("iban", "GB82 WEST 1234 5698 7654 32"))
ex("my iban is GB82WEST12345698765432.", ("iban", "GB82WEST12345698765432"))
ex("DE89 3704 0044 0532 0130 00 is the account", ("iban", "DE89 3704 0044 0532 0130 00"))
ex("send to DE89370400440532013000", ("iban", "DE89370400440532013000"))
ex("FR14 2004 1010 0505 0001 3M02 606", ("iban", "FR14 2004 1010 0505 0001 3M02 606"))
ex("NL91ABNA0417164300 please", ("iban", "NL91ABNA0417164300"))
ex("Norway: NO93 8601 1117 947", ("iban", "NO93 8601 1117 947"))
ex("BE68 5390 0754 7034", ("iban", "BE68 5390 0754 7034"))
ex("use CH93 0076 2011 6238 5295 7", ("iban", "CH93 0076 2011 6238 5295 7"))
ex("ES91 2100 0418 4502 0005 1332 thanks", ("iban", "ES91 2100 0418 4502 0005 1332"))
ex("it is IT60 X054 2811 1010 0000 0123 456", ("iban", "IT60 X054 2811 1010 0000 0123 456"))
ex("gb82 west 1234 5698 7654 32 lowercase", ("iban", "gb82 west 1234 5698 7654 32"))
ex("AT61-1904-3002-3457-3201", ("iban", "AT61-1904-3002-3457-3201"))
ex("IE29 AIBK 9311 5212 3456 78 and PL61 1090 1014 0000 0712 1981 2874",
   ("iban", "IE29 AIBK 9311 5212 3456 78"), ("iban", "PL61 1090 1014 0000 0712 1981 2874"))
ex("MT84 MALT 0110 0001 2345 MTLC AST0 01S", ("iban", "MT84 MALT 0110 0001 2345 MTLC AST0 01S"))

# ---- IBAN: hard negatives ---------------------------------------------------------------
ex("GB82 WEST 1234 5698 7654 33 is wrong")       # checksum
ex("DE89 3704 0044 0532 0130 01")                # checksum
ex("ZZ82 WEST 1234 5698 7654 32")                # no such country
ex("DE89 3704 0044 0532 0130")                   # too short
ex("GB82 WEST 1234 5698 7654 3210")              # runs on
ex("NL91ABNA0417164301")                         # checksum
ex("flight BA12 3456 7890 to london")
ex("model AB12 CDEF 3456 7890 1234 56")
ex("FR76 3000 6000 0112 3456 7890 180")          # checksum (one digit off)
ex("ES91 2100 0418 4502 0005 1333")              # checksum

# ---- SSN: positives ---------------------------------------------------------------------
ex("my social is 536-22-1987", ("ssn", "536-22-1987"))
ex("SSN 219 09 9999", ("ssn", "219 09 9999"))
ex("it's 078-05-1120 i think", ("ssn", "078-05-1120"))
ex("social security number 123456789", ("ssn", "123456789"))
ex("my social security number is five three six two two one nine eight seven",
   ("ssn", "five three six two two one nine eight seven"))
ex("ssn: 899-12-3456", ("ssn", "899-12-3456"))
ex("665-01-0001 and 667-99-9999", ("ssn", "665-01-0001"), ("ssn", "667-99-9999"))
ex("the last one 001-01-0001", ("ssn", "001-01-0001"))
ex("social 4 3 2 1 1 5 6 7 8", ("ssn", "4 3 2 1 1 5 6 7 8"))
ex("his SSN is 772-33-4521, date of birth 1980", ("ssn", "772-33-4521"))
ex("number is 345-67-8901", ("ssn", "345-67-8901"))
ex("security number, it's 601 44 2398", ("ssn", "601 44 2398"))

# ---- SSN: hard negatives ----------------------------------------------------------------
ex("666-12-3456 is not issued")
ex("900-12-3456 neither")
ex("000-12-3456 never")
ex("123-00-4567 bad group")
ex("123-45-0000 bad serial")
ex("order 123456789 shipped")
ex("routing 0 2 1 0 0 0 0 2 1")
ex("the dates 2024-05-12 and 2023-11-30")
ex("ZIP 94103-1234 please")
ex("part number 123-456-7890-12")
ex("nine digits 987654321 in a row")
ex("the score was 12-45-6789 points")

# ---- mixed: real data among ordinary numbers --------------------------------------------
ex("order 58213, card 4111 1111 1111 1111, total $45.50", ("card", "4111 1111 1111 1111"))
ex("on 12/05 at 3pm call 415-555-0123 about invoice 7781", ("phone", "415-555-0123"))
ex("2 pizzas, 1 salad, deliver to 94103, phone 415 555 0111", ("phone", "415 555 0111"))
ex("ssn 536-22-1987 and zip 94103-1234", ("ssn", "536-22-1987"))
ex("my card is 5555 5555 5555 4444 and my phone is 020 7946 0958",
   ("card", "5555 5555 5555 4444"), ("phone", "020 7946 0958"))
ex("refund 19.99 to GB82 WEST 1234 5698 7654 32 by 2024-06-01", ("iban", "GB82 WEST 1234 5698 7654 32"))
ex("email a@b.com, order 4155550123, call 212-555-0147",
   ("email", "a@b.com"), ("phone", "212-555-0147"))
ex("at 10:30 i called 650 555 0100 twice", ("phone", "650 555 0100"))
ex("the 3 numbers: 4012 8888 8888 1881, 42, 7", ("card", "4012 8888 8888 1881"))
ex("room 12, floor 3, cell 07700 900456", ("phone", "07700 900456"))
ex("it was one two three four five six seven eight nine zero, no wait, four one five five five five zero one two three",
   ("phone", "four one five five five five zero one two three"))
ex("version 2.4.1, contact dev at example dot com for the email", ("email", "dev at example dot com"))

# ---- more hard negatives ----------------------------------------------------------------
ex("I need 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 boxes")
ex("the years 1987 1988 1989 1990 were good")
ex("lat 37.7749 long -122.4194")
ex("pi is 3.14159265358979")
ex("the invoice total 12,345,678.90 is due 2024-07-01")
ex("my flight UA 1234 departs 06:45 from gate 23")
ex("set the timer for 15 minutes and 30 seconds")
ex("uh uh oh oh no")
ex("I'm thirty four and my wife is thirty two")
ex("one one one one one")
ex("press one for sales, two for support, three for billing")
ex("the population is 8,336,817")
ex("we shipped 4111 units in 2023")
ex("product code 00123 4567 8901")
ex("batch 20240512-0001 done")
ex("1 800 flowers is a brand")
ex("apartment 4B at 221 Baker Street")
ex("score 100-98 in overtime")
ex("MAC 00:1A:2B:3C:4D:5E")
ex("IP 192.168.100.200")
ex("account 1234 5678")
ex("she said oh one of them")
ex("our order number 0044 1234 5678 is confirmed")
ex("it happened on 05 12 2024 around 10 30")
ex("steps 1-2-3-4-5-6-7-8-9-0")
ex("chapter 4, verse 16, line 19")
ex("UUID 123e4567-e89b-12d3-a456-426614174000")
ex("hash 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08")
ex("counted 20 30 40 50 60 70 80 90 sheep")
ex("a million is 1 000 000 and a billion 1 000 000 000")
ex("the receipt number is 5105 1051 0510 5101")   # Luhn fails
ex("case 5105105105105101 closed")                 # Luhn fails
ex("PO box 4111, Springfield 62704")
ex("her birthday is 1985-03-14 and his 1990-07-22")
ex("listen at two at four at six")
ex("five five five is the prefix in movies")
ex("he scored 78 - 05 - 1120 in three games")
ex("the plan: 3 x 4 x 5 cm")
ex("booking reference 0207 9460 958")

print("\n".join(json.dumps(e, ensure_ascii=False) for e in examples))
