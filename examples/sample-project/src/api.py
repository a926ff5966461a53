"""HTTP handlers of the sample project (placeholder code for the example review)."""
