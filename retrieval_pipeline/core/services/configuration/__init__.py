"""The project configuration: the YAML file's schema, which file a command reads, the question sets and
named retrievers it declares, and the settings an evaluation is run with (its baseline and retry
policies among them). `project.ProjectConfig` is
the one object the rest of the project asks."""
