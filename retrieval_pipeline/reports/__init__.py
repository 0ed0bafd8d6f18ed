"""What a person looks at, shared by the command line and the Dagster layer: charts, the HTML report page
and the Markdown summary. Outside the core because it draws (matplotlib, imported only when a chart is
drawn) and renders templates (Jinja2); the core only hands it the figures.
"""
