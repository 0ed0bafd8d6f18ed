"""Labels and judging: judging files, pooling, a person's or a machine judge's answers, calibrating a
machine judge against people, estimates from both, and the audit of a set's labels and of the
smallest drop it can detect."""
