"""The ``<tool_call>`` text protocol: reading calls out of completions, rendering conversations back."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    convert_to_openai_messages,
)

from hugginggpt.llm.tool_calls import (
    messages_as_text_protocol,
    messages_for_template,
    parse_tool_calls,
    settled_content,
    tool_call_chunks,
)

TOOLS = {"get_weather", "translation"}


def calls(text, names=TOOLS):
    parsed = parse_tool_calls(text, names)
    return parsed.content, [(c["name"], c["args"]) for c in parsed.tool_calls]


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>',
        '<tool_call>\n```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```\n</tool_call>',
        '<tool_call>\n{"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}\n</tool_call>',
        '<tool_call>\n{"name": "get_weather", "parameters": {"city": "Paris"}}\n</tool_call>',
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}}\n</tool_call>',  # stray brace
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}',  # stopped before closing
        '{"name": "get_weather", "arguments": {"city": "Paris"}}',
        '```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```',
        '{"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}',
        "<tool_call>{'name': 'get_weather', 'arguments': {'city': 'Paris'}}</tool_call>",  # Python quotes
        "{'name': 'get_weather', 'arguments': {'city': 'Paris',}}",  # bare, trailing comma
        '```\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```',
    ],
)
def test_one_call_in_many_shapes(text):
    content, found = calls(text)
    assert content == "" and found and set(map(repr, found)) == {repr(("get_weather", {"city": "Paris"}))}
    assert parse_tool_calls(text, TOOLS).invalid_tool_calls == []


def test_parallel_calls_and_surrounding_text():
    text = (
        "I will check both.\n"
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "translation", "arguments": {"text": "hi", "tgt_lang": "fr"}}\n</tool_call>\n'
        "Done."
    )
    content, found = calls(text)
    assert found == [("get_weather", {"city": "Paris"}), ("translation", {"text": "hi", "tgt_lang": "fr"})]
    assert content.startswith("I will check both.") and content.endswith("Done.")
    assert "<tool_call>" not in content


def test_calls_get_distinct_ids():
    text = "".join(
        f'<tool_call>{{"name": "get_weather", "arguments": {{"city": "{c}"}}}}</tool_call>' for c in ("A", "B")
    )
    ids = [c["id"] for c in parse_tool_calls(text, TOOLS).tool_calls]
    assert len(ids) == 2 and all(ids) and ids[0] != ids[1]


def test_bare_call_objects_one_per_line_are_parallel_calls():
    text = '{"name": "get_weather", "arguments": {"city": "A"}}\n{"name": "translation", "arguments": {"text": "x"}}'
    assert calls(text) == ("", [("get_weather", {"city": "A"}), ("translation", {"text": "x"})])
    mixed = '{"name": "get_weather", "arguments": {"city": "A"}}\nthen I will answer'
    assert calls(mixed) == (mixed, [])


def test_a_list_of_calls_as_the_whole_answer():
    text = json.dumps([{"name": "get_weather", "arguments": {"city": "A"}},
                       {"name": "get_weather", "arguments": {}}])
    assert calls(text) == ("", [("get_weather", {"city": "A"}), ("get_weather", {})])


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>\n{"name": "launch_rockets", "arguments": {}}\n</tool_call>',  # unknown tool
        '<tool_call>\nget_weather(city="Paris")\n</tool_call>',  # not JSON
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Par',  # cut off mid-call
        '<tool_call>\n{"name": "get_weather", "arguments": [1, 2]}\n</tool_call>',  # arguments not an object
        '<tool_call>\n{"name": "get_weather", "arguments": "{broken"}\n</tool_call>',
        '<tool_call>\n{"arguments": {"city": "Paris"}}\n</tool_call>',  # no name
    ],
)
def test_unusable_blocks_stay_in_content_and_are_invalid_calls(text):
    parsed = parse_tool_calls(text, TOOLS)
    assert parsed.tool_calls == []
    assert parsed.content == text.strip()
    [invalid] = parsed.invalid_tool_calls
    assert invalid["type"] == "invalid_tool_call" and invalid["error"] and invalid["id"]
    assert invalid["args"] and invalid["args"] in text  # what the model wrote, for the agent to see


@pytest.mark.parametrize("text", ['{ "name": "get_weather", "arguments": { "city": "Rome is a city. Rome is a city.',
                                  '```json\n[{"name": "get_weather", "arguments": {"ci'])
def test_a_bare_call_of_an_offered_tool_cut_off_is_an_invalid_call_not_an_answer(text):
    parsed = parse_tool_calls(text, TOOLS)
    assert parsed.tool_calls == [] and parsed.content == text.strip()
    [invalid] = parsed.invalid_tool_calls
    assert invalid["name"] == "get_weather" and "cut off" in invalid["error"]


def test_cut_off_text_that_names_no_offered_tool_stays_an_answer():
    for text in ['{"name": "Bob", "age": 4', 'The weather {"name": "get_weather"']:
        parsed = parse_tool_calls(text, TOOLS)
        assert parsed.content == text.strip() and parsed.tool_calls == [] == parsed.invalid_tool_calls


def test_invalid_calls_name_the_tool_and_the_cause():
    unknown = parse_tool_calls('<tool_call>{"name": "launch_rockets", "arguments": {}}</tool_call>', TOOLS)
    assert unknown.invalid_tool_calls[0]["name"] == "launch_rockets"
    assert "not one of the tools offered" in unknown.invalid_tool_calls[0]["error"]
    bad_args = parse_tool_calls('{"name": "get_weather", "arguments": [1, 2]}', TOOLS)  # bare, offered tool
    assert bad_args.tool_calls == [] and bad_args.content == '{"name": "get_weather", "arguments": [1, 2]}'
    assert bad_args.invalid_tool_calls[0]["name"] == "get_weather"
    assert "not an object" in bad_args.invalid_tool_calls[0]["error"]


def test_bare_json_is_a_call_only_for_an_offered_tool():
    text = '{"name": "get_weather", "arguments": {"city": "Paris"}}'
    assert calls(text, {"translation"}) == (text, [])  # not offered in this request: an answer
    assert parse_tool_calls(text, {"translation"}).invalid_tool_calls == []
    assert calls('{"name": "Bob", "arguments": {}}') == ('{"name": "Bob", "arguments": {}}', [])
    assert parse_tool_calls(text).tool_calls == []  # no tools offered: nothing is a call


def test_an_answer_message_carries_invalid_calls_the_langchain_way():
    parsed = parse_tool_calls('<tool_call>{"name": "nope", "arguments": {}}</tool_call>', TOOLS)
    message = AIMessage(content=parsed.content, tool_calls=parsed.tool_calls,
                        invalid_tool_calls=parsed.invalid_tool_calls)
    assert message.tool_calls == [] and message.invalid_tool_calls[0]["name"] == "nope"


def test_one_bad_block_does_not_drop_a_good_one():
    good = '<tool_call>{"name": "get_weather", "arguments": {"city": "Rome"}}</tool_call>'
    bad = '<tool_call>{"name": "nope", "arguments": {}}</tool_call>'
    content, found = calls(good + "\n" + bad)
    assert found == [("get_weather", {"city": "Rome"})]
    assert content == bad
    assert [c["name"] for c in parse_tool_calls(good + "\n" + bad, TOOLS).invalid_tool_calls] == ["nope"]


@pytest.mark.parametrize(
    "text",
    [
        "The weather in Paris is sunny.",
        '{"answer": "sunny"}',  # JSON, but not a call
        '{"name": "get_weather", "arguments": {}}\n{"answer": 1}',  # one of the objects is not a call
        "42",
        'Here it is: {"name": "get_weather", "arguments": {"city": "Paris"}} as you asked',  # not the whole answer
        "",
    ],
)
def test_plain_answers_have_no_calls(text):
    assert calls(text) == (text.strip(), [])


def test_without_names_any_tool_is_accepted():
    parsed = parse_tool_calls('<tool_call>{"name": "anything", "arguments": {"x": 1}}</tool_call>')
    assert [(c["name"], c["args"]) for c in parsed.tool_calls] == [("anything", {"x": 1})]


def conversation():
    return convert_to_openai_messages([
        SystemMessage("Be brief."),
        HumanMessage("Weather in Paris and Rome?"),
        AIMessage("Checking.", tool_calls=[
            {"name": "get_weather", "args": {"city": "Paris"}, "id": "c1"},
            {"name": "get_weather", "args": {"city": "Rome"}, "id": "c2"},
        ]),
        ToolMessage("sunny", tool_call_id="c1"),
        ToolMessage("rainy", tool_call_id="c2"),
        AIMessage("Paris is sunny, Rome rainy."),
    ])


def test_template_messages_carry_arguments_as_objects():
    messages = messages_for_template(conversation())
    call = messages[2]["tool_calls"][0]
    assert call["function"] == {"name": "get_weather", "arguments": {"city": "Paris"}}
    assert call["id"] == "c1"
    assert all(isinstance(m["content"], str) for m in messages)
    parts = [{"type": "text", "text": "rain"}, {"type": "image_url", "image_url": {"url": "x"}}, {"type": "text", "text": "y"}]
    assert messages_for_template([{"role": "tool", "content": parts}])[0]["content"] == "rainy"


def test_text_protocol_for_templates_without_tools():
    tool = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}
    messages = messages_as_text_protocol(conversation(), [tool])
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "assistant"]
    system = messages[0]["content"]
    assert system.startswith("Be brief.") and json.dumps(tool) in system and "<tool_call>" in system
    assistant = messages[2]["content"]
    assert assistant.startswith("Checking.")
    replayed = parse_tool_calls(assistant, TOOLS)
    assert [(c["name"], c["args"]) for c in replayed.tool_calls] == [
        ("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})]
    # both results in one user turn, in order
    assert messages[3]["content"] == "<tool_response>\nsunny\n</tool_response>\n<tool_response>\nrainy\n</tool_response>"
    assert all(set(m) == {"role", "content"} for m in messages)


def test_text_protocol_adds_a_system_turn_and_omits_empty_tool_lists():
    plain = [{"role": "user", "content": "hi"}]
    with_tools = messages_as_text_protocol(plain, [{"type": "function", "function": {"name": "f"}}])
    assert with_tools[0]["role"] == "system" and '"name": "f"' in with_tools[0]["content"]
    assert messages_as_text_protocol(plain, []) == plain


# --- streaming: what may show before the answer ends, and the calls as chunks ---

STREAMED = [
    "The weather in Paris is sunny.",
    '  I will check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\nDone. ',
    '{"name": "get_weather", "arguments": {"city": "Paris"}}',
    '```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```',
    '[{"name": "get_weather", "arguments": {}}]',
    '{"answer": "sunny"}',
    "Use <tool and <tool_cal as words, then <tool_call>{'name': 'translation', 'arguments': {'text': 'hi'}}",
    '<tool_call>\n{"name": "launch_rockets", "arguments": {}}\n</tool_call> after',
    'A <tool_call>{"name": "get_weather", "arguments": {"city": "Par',
    '{"name": "get_weather", "arguments": {}}\nthen I will answer',
    "<tool_call></tool_call>",
    "",
]


@pytest.mark.parametrize("names", [TOOLS, None])
@pytest.mark.parametrize("text", STREAMED)
def test_settled_content_only_grows_and_starts_the_final_content(text, names):
    final = parse_tool_calls(text, names).content
    shown = ""
    for end in range(len(text) + 1):
        settled = settled_content(text[:end], names)
        assert settled.startswith(shown) and final.startswith(settled), (text[:end], settled, final)
        shown = settled


def test_settled_content_shows_text_before_a_call_and_holds_what_may_be_one():
    assert settled_content("I will check.\n<tool", TOOLS) == "I will check."
    assert settled_content("I will check.\n<tool_call>{", TOOLS) == "I will check."
    assert settled_content("Sunny <b>", TOOLS) == "Sunny <b>"
    assert settled_content('{"name": "get_weather"', TOOLS) == ""  # may be a bare call
    assert settled_content('{"name": "get_weather"', None) == '{"name": "get_weather"'  # no tools: no bare calls


@pytest.mark.parametrize("text", STREAMED)
def test_tool_call_chunks_add_up_to_the_parsed_calls(text):
    parsed = parse_tool_calls(text, TOOLS)
    first = AIMessageChunk(content=parsed.content[:3])
    last = AIMessageChunk(content=parsed.content[3:], tool_call_chunks=tool_call_chunks(parsed), chunk_position="last")
    message = first + last
    assert message.content == parsed.content
    assert message.tool_calls == parsed.tool_calls  # ids included
    assert [(c["name"], c["id"]) for c in message.invalid_tool_calls] == [
        (c["name"], c["id"]) for c in parsed.invalid_tool_calls]
    for mine, theirs in zip(message.invalid_tool_calls, parsed.invalid_tool_calls, strict=True):
        # what the model wrote; as a JSON string where it reads as an object (else it would be a call)
        assert mine["args"] in (theirs["args"], json.dumps(theirs["args"]))
