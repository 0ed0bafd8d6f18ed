"""onnxruntime's execution providers for the `onnx` runtime: `providers: [CUDAExecutionProvider,
CPUExecutionProvider]` runs the model on the GPU where there is one and on the CPU elsewhere.

A provider that is not available here is left out only when the list names one that is (the fallback
the configuration asked for); a list none of whose providers is available is refused, naming the ones
that are, rather than left to onnxruntime, which warns and quietly runs on the CPU. A name onnxruntime
does not know at all (a typo) is refused whatever else the list holds. The GPU providers come with
`onnxruntime-gpu` (the `gpu` extra), which replaces `onnxruntime` in the environment.
"""

from __future__ import annotations

from collections.abc import Sequence

from retrieval_pipeline.retrievers.encoders.base import EncoderConfigError

CPU = "CPUExecutionProvider"
DEFAULT = (CPU,)


def chosen_providers(asked: Sequence[str]) -> tuple[str, ...]:
    """The providers of `asked` available here, in its order; refused when it names none of them."""
    import onnxruntime

    available = onnxruntime.get_available_providers()
    unknown = [name for name in asked if name not in onnxruntime.get_all_providers()]
    if unknown:
        raise EncoderConfigError("providers", f"onnxruntime has no provider {unknown[0]}; available here: {', '.join(available)}")
    usable = tuple(name for name in asked if name in available)
    if not usable:
        raise EncoderConfigError("providers", f"{', '.join(asked)} not available here; available: {', '.join(available)}")
    return usable
