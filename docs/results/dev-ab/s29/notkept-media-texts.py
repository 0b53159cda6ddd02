# not kept: texts_of_made_media (references.py), run as pass "media-texts" right after "kinds"
def texts_of_made_media(plan: Plan, ctx: PlanContext) -> tuple[Plan, list[Repair]]:
    """A text argument that is wholly the output of an earlier task making media and no text (text-to-speech
    given the picture a drawing makes: "then describe the new image with your voice"), left so by ``kinds``
    (no earlier task writes a text it could read instead), reads that media's text as the task table gives
    it (``text_of``: image-to-text of the picture, automatic-speech-recognition of the audio): the plan's
    task doing that, else one added right before the reader. A kind with no such task (a video) is left for
    the planner to ask again. Reads kinds and the plan's graph only."""

    def complete(tasks: list[PlanTask], position: int) -> tuple[list[PlanTask], int, str] | None:
        task = tasks[position]
        earlier = {t.id: t for t in tasks[:position]}
        for arg in ctx.known[task.task].args:
            source = earlier.get(whole_ref(task.args.get(arg.name)))  # type: ignore[arg-type]
            made = ctx.known[source.task] if source is not None else None
            if arg.value_kind != "text" or made is None or not made.outputs or made.produces("text"):
                continue
            for kind in (k for k in made.outputs if k in MEDIA_KINDS):
                reader = text_reader(kind, ctx)
                if reader is None:
                    continue
                tasks, position, how = reading_made(tasks, position, arg.name, reader, f"<resource>-{source.id}", ctx)
                return tasks, position, (f"{task.task}'s {arg.name} read task {source.id} ({source.task}), which makes "
                                         f"a {kind} and no text: it reads the {kind}'s text, {how}")
        return None

    return _completed(plan, complete)


