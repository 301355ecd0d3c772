"""Dedup of a pandas DataFrame with the neardup module.

neardup.dedup takes an iterable of dicts, so the DataFrame goes in as its
records (DataFrame.to_dict("records")) and the answer comes back as a column.

    python3 examples/pandas_dedup.py
"""

import pathlib

import pandas as pd

import neardup

df = pd.read_json(pathlib.Path(__file__).with_name("news.jsonl"), lines=True)
records = list(neardup.dedup(df.to_dict("records")))  # one record per row, in order
df["duplicate"] = [r["duplicate"] for r in records]
df["nearest"] = [r["nearest"] for r in records]
unique = df[~df["duplicate"]]

print(df[["id", "source", "duplicate", "nearest"]].to_string(index=False))
print(f"{len(unique)} of {len(df)} rows kept:", ", ".join(unique["id"]))
