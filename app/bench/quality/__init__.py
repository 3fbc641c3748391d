"""What the quality checks ask and how they score: the needle and its depth x length grid
(`needle`, `needle_grid`), tasks and their answer checks (`task_spec`, `task_checks`,
`answer_schema`), the tool-call cases (`tool_schemas`), their result models (`results`)
and the statistics they need (`stats`).

Pure of the network: imports prompts and result models, never the transport, the stream
or the stages."""
