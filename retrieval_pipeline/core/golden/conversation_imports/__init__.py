"""Importers of conversational collections: TREC CAsT and iKAT topics with their qrels (cast.py), QReCC-
and TopiOCQA-style records (records.py), and the rules they share once the turns are read (turns.py)."""
