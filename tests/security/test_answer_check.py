"""Issue 23, low item: the answer check flags every file the answer claims that no task made.

It flagged absolute and home paths and media names, but not relative paths through hidden or parent
folders (``.ssh/id_rsa``), documents (``report.docx``) or ``file:`` URLs.
"""

from __future__ import annotations

import pytest

from hugginggpt.agent.answer_check import unknown_paths

FILES = {"/runs/r1/outputs/a.png", "/data/in/cat.jpg"}


@pytest.mark.parametrize("mention", [".ssh/id_rsa", "report.docx", "file:///etc/passwd", "file:/etc/shadow",
                                     "../secret.txt", "config/.env", "backup.tar.gz", "FILE:///C:/Users/u/key.pem"])
def test_claimed_files_no_task_made_are_flagged(mention):
    answer = f"Done: see {mention}. The image is /runs/r1/outputs/a.png and the input /data/in/cat.jpg."
    assert unknown_paths(answer, FILES) == [mention]


def test_known_files_and_prose_are_left_alone():
    text = ("The image file:///runs/r1/outputs/a.png (also outputs/a.png and cat.jpg) was made with Node.js "
            "on example.com, v1.2.3, and/or TCP/IP at ~5 km/s ... ./run it; e.g. 1.5x, i.e. done.")
    assert unknown_paths(text, FILES) == []


@pytest.mark.parametrize("answer, named", [
    ("我生成了fake.png文件。", "fake.png"),          # the name glued to the words on both sides
    ("出力はfake.wavです", "fake.wav"),
    ("결과는fake.mp4에 저장했습니다", "fake.mp4"),
])
def test_a_name_glued_to_chinese_japanese_or_korean_words_is_read_alone(answer, named):
    assert unknown_paths(answer, set()) == [named]
    assert unknown_paths(answer, {"/ws/outputs/" + named}) == []  # the run's own file is known by its name


def test_a_name_in_those_scripts_is_kept_whole():
    assert unknown_paths("已生成 庭.jpg文件", {"/ws/outputs/庭.jpg"}) == []
    assert unknown_paths("a.png和b.png", {"/ws/a.png"}) == ["b.png"]


def test_words_glued_before_an_absolute_path_are_not_a_folder_of_it():
    # "saved at/tmp/猫/out.png": the path starts at the slash, its folders keep their own letters
    assert unknown_paths("画像は/tmp/猫/out.png に保存しました", set()) == ["/tmp/猫/out.png"]
    assert unknown_paths("结果保存在~/图片/out.png中", set()) == ["~/图片/out.png"]
