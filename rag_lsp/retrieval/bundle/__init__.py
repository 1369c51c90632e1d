"""The bundle an answer hands over: what the kind of question needs, counted in real tokens, with how complete it
is and where each piece came from.

In the order a question's answer is built: ``classify`` (the task type), ``templates`` (the sections it needs),
``relations`` (callers, callees, tests, docs and configuration of the top places), ``summaries`` (signatures
and docstrings), ``provenance`` (the commit checked out, blob ids, files the caller already holds),
``sections`` (packing in the template's order with ``tokenizers``' real counts), ``sufficiency`` and
``prompt_block`` (the answer as a byte-stable prompt prefix)."""
