"""Judge templates: built-ins render both orders faithfully, files override them, bad files fail clearly."""

from __future__ import annotations

import pytest

from judgewise.errors import ConfigError, InputError
from judgewise.judges.templates import (available_templates, get_template, load_template_file, parse_template,
                                        register_template)

BUILTINS = ["arena_hard_5way", "llmbar_binary", "clb_confidence", "direct_correctness", "likert"]
PAIRWISE = [n for n in BUILTINS if get_template(n).kind == "pairwise"]
POINTWISE = [n for n in BUILTINS if get_template(n).kind == "pointwise"]


def test_all_five_builtin_templates_are_registered_with_a_version():
    assert set(BUILTINS) <= set(available_templates())
    for name in BUILTINS:
        t = get_template(name)
        assert t.name == name and t.version and t.reask() and t.parser.labels


@pytest.mark.parametrize("name", PAIRWISE)
def test_pairwise_templates_show_the_first_response_before_the_second(name):
    t = get_template(name)
    user = t.pairwise_messages("INSTRUCTION-X", "FIRST-RESPONSE", "SECOND-RESPONSE")[-1]["content"]
    assert user.index("INSTRUCTION-X") < user.index("FIRST-RESPONSE") < user.index("SECOND-RESPONSE")
    swapped = t.pairwise_messages("INSTRUCTION-X", "SECOND-RESPONSE", "FIRST-RESPONSE")[-1]["content"]
    assert swapped.index("SECOND-RESPONSE") < swapped.index("FIRST-RESPONSE")


@pytest.mark.parametrize("name", POINTWISE)
def test_pointwise_templates_show_the_one_response(name):
    msgs = get_template(name).pointwise_messages("Q-TEXT", "THE-ANSWER")
    assert "Q-TEXT" in msgs[-1]["content"] and "THE-ANSWER" in msgs[-1]["content"]


def test_reference_answer_appears_only_when_given():
    t = get_template("arena_hard_5way")
    assert "REF-ANSWER" in t.pairwise_messages("q", "a", "b", reference="REF-ANSWER")[-1]["content"]
    assert "Reference" not in t.pairwise_messages("q", "a", "b")[-1]["content"]


def test_responses_with_jinja_syntax_are_shown_literally():
    text = "{{ response_a }} {% if x %}y{% endif %}"
    user = get_template("llmbar_binary").pairwise_messages("q", text, "other")[-1]["content"]
    assert text in user


@pytest.mark.parametrize("name", BUILTINS)
def test_reask_message_names_the_verdict_format(name):
    t = get_template(name)
    assert "verdict" in t.reask().lower()
    assert t.parser.parse(t.reask()) is not None or name == "likert"  # the message quotes a valid verdict


@pytest.mark.parametrize("name", BUILTINS)
def test_grammar_is_gbnf_listing_every_label(name):
    t = get_template(name)
    g = t.grammar()
    assert g.startswith("root ::=")
    for label in t.parser.labels:
        assert f'"{label}"' in g


def _override(tmp_path, text_change: str = "", meta_change: tuple[str, str] = ("", "")):
    source = get_template("llmbar_binary").source.replace(*meta_change) if meta_change[0] else \
        get_template("llmbar_binary").source
    if text_change:
        source = source.replace("Select the Output (a)", text_change)
    path = tmp_path / "mine.j2"
    path.write_text(source, encoding="utf-8")
    return path


def test_user_file_overrides_a_builtin_and_changes_the_template_hash(tmp_path):
    path = _override(tmp_path, text_change="Pick the Output (a)")
    mine = get_template(str(path))
    builtin = get_template("llmbar_binary")
    assert mine.name == builtin.name and mine.sha != builtin.sha
    assert "Pick the Output (a)" in mine.pairwise_messages("q", "a", "b")[-1]["content"]


def test_registering_a_file_template_requires_replace_for_builtin_names(tmp_path):
    mine = load_template_file(_override(tmp_path, meta_change=("name: llmbar_binary", "name: my_llmbar")))
    register_template(mine)
    assert get_template("my_llmbar") is mine
    with pytest.raises(ConfigError, match="already registered"):
        register_template(get_template("llmbar_binary"))


def test_likert_scale_option_sets_parser_and_grammar(tmp_path):
    source = get_template("likert").source.replace("scale: 5", "scale: 7")
    t = parse_template(source, "likert7.j2")
    assert t.parser.labels == [str(k) for k in range(1, 8)]
    assert '"7"' in t.grammar() and "1 to 7" in t.pointwise_messages("q", "r")[-1]["content"]


@pytest.mark.parametrize("change, field", [(("name: llmbar_binary\n", ""), "name"),
                                           (("kind: pairwise", "kind: listwise"), "kind")])
def test_bad_metadata_is_an_input_error_naming_file_and_field(tmp_path, change, field):
    path = _override(tmp_path, meta_change=change)
    with pytest.raises(InputError) as info:
        load_template_file(path)
    assert info.value.field == field and str(path) in str(info.value)


def test_file_without_header_or_with_bad_jinja_is_an_input_error(tmp_path):
    plain = tmp_path / "plain.j2"
    plain.write_text("{% block user %}hi{% endblock %}", encoding="utf-8")
    with pytest.raises(InputError, match="judgewise-template"):
        load_template_file(plain)
    broken = _override(tmp_path, text_change="Select {% if %}")
    with pytest.raises(InputError, match="Jinja2 syntax"):
        load_template_file(broken)


def test_unknown_parser_or_missing_reask_block_fail_at_load(tmp_path):
    with pytest.raises(ConfigError, match="unknown verdict parser"):
        load_template_file(_override(tmp_path, meta_change=("parser: llmbar_binary", "parser: nope")))
    source = get_template("llmbar_binary").source
    no_reask = source[:source.index("{%- block reask")] + source[source.index("{%- block grammar"):]
    with pytest.raises(ConfigError, match="reask"):
        parse_template(no_reask, "noreask.j2")


def test_unknown_template_name_lists_the_known_ones():
    with pytest.raises(ConfigError, match="arena_hard_5way"):
        get_template("no_such_template")


ESCAPES = [
    "{{ cycler.__init__.__globals__.os.system('touch MARKER') }}",
    "{{ lipsum.__globals__['os'].system('touch MARKER') }}",
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{{ self._TemplateReference__context.cycler.__init__.__globals__.os.system('touch MARKER') }}",
    "{{ joiner.__init__.__globals__.__builtins__.open('MARKER', 'w') }}",
]


def _hostile(tmp_path, payload: str, block: str = "user"):
    source = get_template("llmbar_binary").source
    if block == "user":
        source = source.replace("Select the Output (a)", payload + " Select the Output (a)")
    else:
        source = source.replace("{%- block reask -%}", "{%- block reask -%}" + payload)
    assert payload in source
    path = tmp_path / "shared.j2"
    path.write_text(source, encoding="utf-8")
    return path


@pytest.mark.parametrize("payload", ESCAPES)
def test_a_template_cannot_reach_python_internals_and_fails_naming_its_file(tmp_path, monkeypatch, payload):
    monkeypatch.chdir(tmp_path)
    t = load_template_file(_hostile(tmp_path, payload))
    with pytest.raises(ConfigError, match=r"shared\.j2.*sandbox") as info:
        t.pairwise_messages("q", "a", "b")
    assert "\n" not in str(info.value)
    assert not (tmp_path / "MARKER").exists()


def test_a_hostile_reask_block_fails_when_the_file_is_loaded(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=r"shared\.j2.*'reask'.*sandbox"):
        load_template_file(_hostile(tmp_path, ESCAPES[0], block="reask"))
    assert not (tmp_path / "MARKER").exists()


@pytest.mark.parametrize("payload", ["{{ 'x' * 10**9 }}", "{{ [1, 2] * 999999999 }}", "{{ 7 ** 9999999 }}",
                                     "{{ 'x'|center(10**9) }}", "{{ 'x'.ljust(10**8) }}",
                                     "{{ 'x'|indent(width=10**8) }}"])
def test_a_template_cannot_build_a_huge_value(tmp_path, payload):
    t = load_template_file(_hostile(tmp_path, payload))
    with pytest.raises(ConfigError, match="sandbox"):
        t.pairwise_messages("q", "a", "b")


def test_a_template_that_fails_while_rendering_is_a_config_error_naming_its_file(tmp_path):
    t = load_template_file(_hostile(tmp_path, "{{ 1 // 0 }}{% include 'other.j2' %}"))
    with pytest.raises(ConfigError, match=r"shared\.j2.*ZeroDivisionError"):
        t.pairwise_messages("q", "a", "b")


def test_ordinary_template_features_still_work_in_the_sandbox(tmp_path):
    payload = "{% for w in ['x', 'y'] %}{{ w|upper }}{{ loop.index }}{% endfor %}{{ 'ab' * 3 }}{{ 2 ** 3 }}"
    t = load_template_file(_hostile(tmp_path, payload))
    assert "X1Y2ababab8" in t.pairwise_messages("q", "a", "b")[-1]["content"]


def test_a_system_block_is_rendered_once_only_when_it_reads_no_variable():
    header = "{{#- judgewise-template\nname: sys_{v}\nversion: 1\nkind: pairwise\nparser: arena_hard_5way\n-#}}\n"
    user = "{% block user %}{{ instruction }} {{ response_a }} {{ response_b }}{% endblock %}"
    reask = "{% block reask %}Verdict?{% endblock %}"
    fixed = parse_template(header.format(v=1) + "{% block system %}Judge {{ 'fairly' | upper }}.{% endblock %}"
                           + user + reask)
    per_call = parse_template(header.format(v=2) + "{% block system %}Judge the answers to {{ instruction }}."
                              "{% endblock %}" + user + reask)
    for instruction in ("Q1", "Q2"):
        assert fixed.pairwise_messages(instruction, "a", "b")[0]["content"] == "Judge FAIRLY."
        assert per_call.pairwise_messages(instruction, "a", "b")[0]["content"] == \
            f"Judge the answers to {instruction}."
