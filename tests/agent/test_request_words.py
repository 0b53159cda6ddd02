"""How repairs read a request: quoted texts (apostrophes are not quotes), passages, own words."""

from __future__ import annotations

from hugginggpt.agent.request_words import RequestWords, folded, own_words, quoted_passages, quoted_texts
from hugginggpt.agent.unrequested import asks_for_writing, mentioned_kinds

REQUEST = ("Here's my note: 'It's a story about a girl who sings songs to the sea every night.' "
           'and my question "Who sings?"')


def test_quotes_are_found_and_apostrophes_inside_words_are_not_quotes():
    assert quoted_texts(REQUEST) == ["It's a story about a girl who sings songs to the sea every night.", "Who sings?"]
    assert quoted_passages(REQUEST) == ["It's a story about a girl who sings songs to the sea every night."]


def test_cue_words_count_only_outside_the_quotes():
    assert "story" not in own_words(REQUEST) and "Here's my note:" in own_words(REQUEST)
    assert not asks_for_writing(RequestWords(REQUEST))  # "story" is in the quoted note, not asked for
    assert mentioned_kinds(RequestWords(REQUEST)) == set()  # "songs" likewise
    assert asks_for_writing(RequestWords("Write a story about 'the sea'."))


def test_folded_text_compares_without_case_or_spacing():
    assert folded("  The  Car\nis BLUE ") == "the car is blue"


def test_one_reading_of_a_request_serves_every_repair():
    words = RequestWords("Caption 'photos/Cat.JPG', then  read   'It is a long passage about a cat that sleeps all day.' aloud")
    assert words.files["image"] == ["photos/Cat.JPG"] and words.files["audio"] == []
    assert words.passages == ["It is a long passage about a cat that sleeps all day."]
    assert "passage" not in words.own and "aloud" in words.own
    assert words.names_file("Cat.JPG") and words.names_file("/tmp/run/photos/Cat.JPG") and not words.names_file("dog.png")
    assert words.says("Then read") and not words.says("then write") and not words.says(" '' ")
