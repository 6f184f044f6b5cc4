"""What stands in for the embedding model's tokenizer, offline: cognee's
default one is downloaded on first use, and the tests reach no network."""


class WordTokenizer:
    """Tokens are whitespace-separated words (cognee's `TokenizerInterface`)."""

    model_input_limit = 8191

    def extract_tokens(self, text: str) -> list:
        return text.split()

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def decode_single_token(self, token: int) -> str:
        return str(token)

    def trim_text_to_max_tokens(self, text: str) -> str:
        return " ".join(text.split()[: self.model_input_limit])


def word_vector(text: str, dimensions: int) -> list:
    """A deterministic embedding: each word adds one to a dimension chosen by
    a stable hash of it, so texts that share words point the same way."""
    import hashlib

    vector = [0.0] * dimensions
    for word in (text or "").lower().split():
        digest = hashlib.blake2b(word.encode(), digest_size=8).digest()
        vector[int.from_bytes(digest, "little") % dimensions] += 1.0
    if not any(vector):
        vector[0] = 1.0
    return vector


async def embed_words(self, text):
    """`LiteLLMEmbeddingEngine.embed_text` offline: `word_vector` of each text."""
    from cognee.infrastructure.databases.vector.embeddings.EmbeddingEngine import EmbeddingResult

    dimensions = self.dimensions or 64
    return EmbeddingResult(vectors=[word_vector(t, dimensions) for t in text], tokens=0)
