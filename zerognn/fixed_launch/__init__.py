"""The fixed launch structure that ZeroGNN's step replays in: the execution envelope (``envelope``), the
step's device-resident control block (``step_control``), the training state as one flat buffer that a step
snapshots and restores (``training_state``), Adam over fixed chunks (``chunked_adam``), the step captured
as a CUDA Graph and regrown after an overflow (``step_graph``), and the device-side loop over that graph
(``device_loop``). The ``zerognn``, ``zerognn-worstcase`` and ``zerognn-epoch`` variants compose these."""
