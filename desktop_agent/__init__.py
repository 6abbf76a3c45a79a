"""desktop_agent: a desktop app that carries out tasks on your computer with a vision-language model."""
