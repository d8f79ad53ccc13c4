"""Parse HTML as a browser would, for tests that inspect tags, links and text."""

from html.parser import HTMLParser


class TagCollector(HTMLParser):
    """Every start tag with its attributes, and the text between them."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags = []
        self.text = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def parse(html):
    collector = TagCollector()
    collector.feed(str(html))
    collector.close()
    return collector


def links_of(html):
    return [a["href"] for tag, a in parse(html).tags if tag == "a" and "href" in a]


def sources_of(html):
    return [a["src"] for _, a in parse(html).tags if "src" in a]
