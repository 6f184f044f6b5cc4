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
