"""What a person looks at, shared by the command line and the Dagster layer: charts and the HTML report
page. Outside the core because it draws (matplotlib, imported only when a chart is drawn) and renders
templates (Jinja2); the core only hands it the figures. The Markdown summary, plain text, is the views'
own (`EvaluationView.to_markdown`, `ComparisonView.to_markdown`).
"""
