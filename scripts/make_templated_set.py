#!/usr/bin/env python3
"""Writes the templated English test set of doc/evaluation.md ("Templated
English set"): text that nobody tuned the default on, made of the shapes that
break near-duplicate detection on wire news and software help pages.

  /usr/bin/python3 scripts/make_templated_set.py OUT.jsonl [--seed S] [--scale N]

One JSONL document per line, {"id", "text", "family"}. The same seed and scale
give the same bytes. Families (all with different names and numbers, so that
members of one family are NOT duplicates of each other):

  dividend    "Acme Corp qtly div 19 cts vs 19 cts prior pay March 31 record
              March 12": short notices of one template
  earnings    "Shr 14 cts vs 12 cts / Net 510,917 vs 423,000 / Sales ...":
              short tables, one line per figure
  repo        central-bank operations: "The Federal Reserve entered the U.S.
              government securities market to arrange 2.5 billion dlrs of
              customer repurchase agreements, a spokesman said."
  group       groups of 5 to 10 near-identical items that differ by one line
              (a company's notice repeated with another date, a table with one
              figure corrected): near duplicates of each other
  nav         help pages that are mostly navigation text (a long menu shared
              by every page) with one or two lines of their own
  article     longer articles of random prose, some with a lightly edited copy
              (a few words changed): near duplicates

The truth of the evaluation is computed from the text (exact character
5-gram Jaccard), not from the families: the families only make sure that
each shape is present in numbers.
"""
import argparse
import json
import random

MONTHS = ["January", "February", "March", "April", "May", "June", "July",
          "August", "September", "October", "November", "December"]
SYLLABLES = ["ac", "al", "am", "an", "ar", "bel", "bor", "cal", "cor", "dan",
             "del", "er", "gen", "har", "in", "ka", "lan", "lex", "mar", "mon",
             "nor", "ol", "par", "ra", "ren", "sa", "ster", "ton", "tra", "ven",
             "vi", "wel", "xon", "zen"]
SUFFIXES = ["Corp", "Inc", "Co", "Ltd", "Bancorp", "Industries", "Group",
            "Holdings", "Financial", "Systems", "Energy", "Resources"]
WORDS = ("the of and to in a is that for it as was with be by on not he this are "
         "or his from at which but have an they you were her she there been one "
         "all we their has would when if so no will more about up out who them "
         "some could what into than its time only new other two may first any "
         "like now my such make over our even most after also did many before "
         "must through back years where much your way well down should because "
         "each just those people how too little state good very make world still "
         "own see men work long get here between both life being under never day "
         "same another know while last might us great old year off come since "
         "against go came right used take three market bank shares profit trade "
         "prices company government officials report analysts growth quarter").split()


def company(rng):
    name = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3)))
    return name.capitalize() + " " + rng.choice(SUFFIXES)


def date(rng):
    return f"{rng.choice(MONTHS)} {rng.randint(1, 28)}"


def cents(rng):
    whole = rng.randint(1, 60)
    return f"{whole}-1/2" if rng.random() < 0.15 else str(whole)


def dividend(rng, name=None):
    name = name or company(rng)
    c = cents(rng)
    prior = c if rng.random() < 0.7 else cents(rng)
    kind = rng.choice(["Qtly div", "Qtly dividend", "Semi-annual div", "Annual div"])
    return (f"{name}\n{kind} {c} cts vs {prior} cts prior\n"
            f"Pay {date(rng)}\nRecord {date(rng)}")


def money(rng):
    if rng.random() < 0.5:
        return f"{rng.randint(100, 999)},{rng.randint(0, 999):03d}"
    return f"{rng.randint(1, 900)}.{rng.randint(0, 9)} mln"


def earnings(rng, name=None):
    name = name or company(rng)
    period = rng.choice(["Qtr", "Year", "Nine mths", "Six mths"])
    shr = f"Shr {rng.randint(1, 99)} cts vs {rng.randint(1, 99)} cts"
    lines = [f"{name} {period} net", shr, f"Net {money(rng)} vs {money(rng)}",
             f"Revs {money(rng)} vs {money(rng)}"]
    if rng.random() < 0.5:
        lines.append(f"Avg shrs {money(rng)} vs {money(rng)}")
    return "\n".join(lines)


def repo(rng):
    amount = f"{rng.randint(1, 9)}.{rng.randint(0, 9)}"
    kind = rng.choice(["customer repurchase agreements", "system repurchase agreements",
                       "matched sale-purchase agreements"])
    funds = f"{rng.randint(5, 7)}-{rng.randint(1, 15)}/16"
    return (f"The Federal Reserve entered the U.S. government securities market to "
            f"arrange {amount} billion dlrs of {kind}, a Fed spokesman said.\n"
            f"Dealers said Federal funds were trading at {funds} pct when the Fed "
            f"began its temporary and indirect supply of reserves to the banking system.")


def prose(rng, words):
    out, line = [], []
    for i in range(words):
        line.append(rng.choice(WORDS))
        if rng.random() < 0.08:
            line[-1] += rng.choice([",", "."])
        if len(line) >= 14 and rng.random() < 0.2:
            out.append(" ".join(line))
            line = []
    if line:
        out.append(" ".join(line))
    return "\n".join(out)


def edit_words(rng, text, share):
    lines = text.split("\n")
    for i, line in enumerate(lines):
        words = line.split(" ")
        for j in range(len(words)):
            if rng.random() < share:
                words[j] = rng.choice(WORDS)
        lines[i] = " ".join(words)
    return "\n".join(lines)


def nav_menu(rng, entries):
    sections = ["Getting Started", "Menus", "Toolbars", "Dialogs", "Shortcut Keys",
                "Options", "Printing", "Files", "Formatting", "Tables", "Charts",
                "Macros", "Security", "Accessibility", "Glossary", "Index"]
    menu = ["Help home", "Contents", "Search", "Print this page"]
    for s in sections:
        menu.append(f"{s} >")
    menu += ["Was this page helpful? Yes No", "Report a problem with this page",
             "Copyright the documentation team. Licensed under the Mozilla Public License."]
    return menu[:entries]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--scale", type=int, default=1, help="multiplies every family's size")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    docs = []

    def add(family, text):
        docs.append({"id": f"{family}-{len(docs):05d}", "text": text, "family": family})

    s = args.scale
    for _ in range(300 * s):
        add("dividend", dividend(rng))
    for _ in range(300 * s):
        add("earnings", earnings(rng))
    for _ in range(30 * s):  # one template: most pairs are near duplicates by their text
        add("repo", repo(rng))
    # Groups of 5-10 items that differ by one line.
    for g in range(40 * s):
        size = rng.randint(5, 10)
        name = company(rng)
        base = (dividend if g % 2 == 0 else earnings)(rng, name).split("\n")
        if g % 4 == 3:  # a longer item: a notice with a paragraph of prose
            base += prose(rng, 60).split("\n")
        for _ in range(size):
            lines = list(base)
            # One line differs: a date or a figure of the same template.
            i = rng.randrange(1, len(lines))
            other = (dividend if g % 2 == 0 else earnings)(rng, name).split("\n")
            lines[i] = other[min(i, len(other) - 1)]
            add("group", "\n".join(lines))
    # Help pages: mostly navigation, one or two lines of their own.
    menu = nav_menu(rng, 23)
    for _ in range(150 * s):
        own = [f"This page is: /text/shared/{rng.randint(0, 99):02d}/{rng.randint(1000, 9999)}.xhp",
               prose(rng, rng.randint(8, 60)).replace("\n", " ")]
        # The menu of the page's manual: the shared entries and 8 to 16 sections.
        sections = menu[4:20]
        mine = sorted(rng.sample(range(len(sections)), rng.randint(8, 16)))
        add("nav", "\n".join(menu[:4] + own + [sections[i] for i in mine] + menu[20:]))
    # Articles, a third of them with a lightly edited copy.
    for a in range(200 * s):
        text = prose(rng, rng.randint(80, 600))
        add("article", text)
        if a % 3 == 0:
            add("article", edit_words(rng, text, rng.choice([0.01, 0.02, 0.04])))
    rng.shuffle(docs)
    with open(args.out, "w", encoding="utf-8") as f:
        for d in docs:
            f.write(json.dumps(d, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
