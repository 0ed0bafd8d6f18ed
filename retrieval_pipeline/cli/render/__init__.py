"""How the command line lays out the core's views: terminal tables fitted to the width, the comparison and
significance tables, the nightly summary, and JSON payloads written as they are made."""
