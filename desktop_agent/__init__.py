"""desktop_agent: carries out tasks on your computer with a vision-language model."""
