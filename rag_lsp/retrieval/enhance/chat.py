"""An OpenAI-compatible chat endpoint and the three things the enhancements ask of it.

- ``variants``: other ways to ask the question (the ``expand`` knob);
- ``hypothetical``: short code a good answer would contain (the ``hyde`` knob), embedded
  and searched like the question, or searched by BM25 when there are no vectors;
- ``rerank_order``: the candidates of a ranking, best first (the ``rerank`` knob).

Each is one ``/chat/completions`` call at temperature 0 with the envelope of
``envelope.py``; any failure is a ``ProviderError`` whose message is short and
safe to show, and the caller degrades to the path without a model.
"""

from __future__ import annotations

from collections.abc import Sequence

from rag_lsp.index.vectors.http_json import ProviderError, post_json
from rag_lsp.retrieval.enhance.envelope import envelope, json_object, system_message
from rag_lsp.retrieval.enhance.retrieval_config import ChatConfig

# Characters of one candidate's code shown to the reranker (the whole context is capped by the envelope too).
RERANK_CODE_CHARS = 1500
MAX_VARIANT_CHARS = 500
MAX_DOCUMENT_CHARS = 4000


class ChatClient:
    """One configured endpoint; ``calls`` counts the requests made through it."""

    def __init__(self, config: ChatConfig) -> None:
        self.config = config
        self.url = config.url.rstrip("/") + "/chat/completions"
        self.calls = 0

    def ask(self, task: str, **fields: str) -> dict:
        """The JSON object the model answers to ``task`` about the untrusted ``fields``; raises ProviderError."""
        self.calls += 1
        payload = {"model": self.config.model, "temperature": 0, "max_tokens": self.config.max_tokens,
                   "messages": [{"role": "system", "content": system_message(task)},
                                {"role": "user", "content": envelope(**fields)}]}
        answer = post_json(self.url, payload, self.config.timeout_ms / 1000, self.config.api_key_env)
        try:
            content = answer["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise ProviderError(f"{self.url} answered no choices[0].message.content") from None
        if not isinstance(content, str):
            raise ProviderError(f"{self.url} answered a message without text")
        return json_object(content)


def _strings(answer: dict, key: str, count: int, longest: int) -> list[str]:
    found = answer.get(key)
    if not isinstance(found, list) or not all(isinstance(item, str) for item in found):
        raise ProviderError(f"the model's answer has no list of strings '{key}'")
    cleaned = [item.strip()[:longest] for item in found if item.strip()]
    if not cleaned:
        raise ProviderError(f"the model's '{key}' are empty")
    return list(dict.fromkeys(cleaned))[:count]


def variants(chat: ChatClient, question: str, count: int) -> list[str]:
    task = (f"A developer asks a question about a code base. Write {count} different search queries that find the "
            "code answering it: use the identifiers, file names and technical terms such code would contain. "
            f"Answer {{\"queries\": [{count} strings]}}.")
    return _strings(chat.ask(task, question=question), "queries", count, MAX_VARIANT_CHARS)


def hypothetical(chat: ChatClient, question: str, count: int) -> list[str]:
    task = (f"A developer asks a question about a code base. Write {count} short hypothetical code snippet(s) "
            "(function or class definitions, with plausible names and a docstring) that would answer it, as they "
            f"might appear in that code base. Answer {{\"documents\": [{count} strings]}}.")
    return _strings(chat.ask(task, question=question), "documents", count, MAX_DOCUMENT_CHARS)


def rerank_order(chat: ChatClient, question: str, candidates: Sequence[tuple[str, str]]) -> list[int]:
    """The positions of ``candidates`` ((where, code) pairs) best first; positions the model left out follow
    in their order, and unknown or repeated ones are ignored."""
    context = "\n\n".join(f"[{number}] {where}\n{code[:RERANK_CODE_CHARS]}"
                          for number, (where, code) in enumerate(candidates))
    task = ("Rank the numbered code places in the context by how well they answer the developer's question, "
            "most relevant first. Answer {\"order\": [place numbers, best first]}.")
    order = chat.ask(task, question=question, context=context).get("order")
    if not isinstance(order, list):
        raise ProviderError("the model's answer has no list 'order'")
    seen = list(dict.fromkeys(n for n in order if isinstance(n, int) and not isinstance(n, bool)
                              and 0 <= n < len(candidates)))
    if not seen:
        raise ProviderError("the model's 'order' names none of the places")
    return seen + [n for n in range(len(candidates)) if n not in seen]
