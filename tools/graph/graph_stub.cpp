// Placeholder until the graph tools land.
