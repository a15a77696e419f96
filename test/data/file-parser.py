"""A parser."""
import os
from typing import List


class Token:
    def __init__(self, text):
        self.text = text


class Parser(object):
    def __init__(self):
        self.tokens: List[Token] = []

    async def parse(self, text):
        return [Token(t) for t in text.split()]


def main():
    print(Parser().parse(os.environ.get("TEXT", "")))


async def serve():
    pass
