"""What the kinds share and no one kind owns: members built through the configuration, chunking."""
