<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name></name>
    <message>
        <location filename="../../app/appearance.py" line="+70"/>
        <source>&amp;Theme</source>
        <extracomment>The theme was applied (``system``, ``light``, ``dark``). hook for tests: shows the &quot;applies at the next start&quot; note</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;System</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+0"/>
        <source>&amp;Light</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+0"/>
        <source>&amp;Dark</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+9"/>
        <source>&amp;Language (applies at the next start)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+4"/>
        <source>System</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+27"/>
        <source>Language</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The new language is used the next time Relax Pipeline Studio starts.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../../app/file_controller.py" line="+64"/>
        <source>Open pipeline</source>
        <extracomment>The title/model/target texts may have changed (saved under a new name ...).</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+0"/>
        <location line="+33"/>
        <source>Pipeline files (*.json *.rps.json);;All files (*)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="-22"/>
        <location line="+3"/>
        <source>Cannot open pipeline</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Opened {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Save pipeline</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+13"/>
        <source>Cannot save pipeline</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Saved {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Unsaved changes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The pipeline “{0}” has unsaved changes. Save them?</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+12"/>
        <source>(none)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+39"/>
        <source>Loading model {0}…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+13"/>
        <source>Could not load {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Cannot open model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Model {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Export Python script</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Python (*.py)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Cannot export script</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Exported {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../../app/help_controller.py" line="+152"/>
        <source>&amp;Help</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Documentation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+3"/>
        <source>&amp;Keyboard Shortcuts</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;About Relax Pipeline Studio</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+22"/>
        <source>unknown (the engine has not answered yet)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&lt;h3&gt;Relax Pipeline Studio {version}&lt;/h3&gt;&lt;p&gt;Build, preview and run Apache TVM Relax pass pipelines.&lt;/p&gt;&lt;p&gt;TVM {tvm} (tvm-ffi {ffi}), in the engine process.&lt;/p&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+7"/>
        <source>About Relax Pipeline Studio</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../../app/main_window.py" line="+51"/>
        <source>Relax Pipeline Studio</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+29"/>
        <source>Passes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Pipeline</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Diff</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Build &amp;&amp; Run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Tuning</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Engine: stopped</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+55"/>
        <source>&amp;New Pipeline</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Open Pipeline…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Save</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Save &amp;As…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Open &amp;Model…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Use a model file (TVMScript, nn.Module, ONNX, torch)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Export Python Script…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Write a standalone Python script that applies this pipeline</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Quit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Undo</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;Redo</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+6"/>
        <source>&amp;Delete Step</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+4"/>
        <source>&amp;Run Pipeline</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Run every step (F5)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Run &amp;to Selected Step</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Run the steps up to the selected one</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Stop</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Stop the running step</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Re-run &amp;Automatically After Edits</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;Fit Graph</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Build &amp;&amp; Run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Build the module, run it, time it and check it (Ctrl+B)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Compare with Baseline</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Latency of this pipeline vs the unoptimized model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+4"/>
        <source>&amp;File</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Open &amp;Recent</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Built-in &amp;Models</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+11"/>
        <source>&amp;Edit</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+3"/>
        <source>&amp;Run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+3"/>
        <source>&amp;View</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Main</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+52"/>
        <source>The engine was restarted; your pipeline is unchanged.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Engine crashed and was restarted</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../../app/panels.py" line="+96"/>
        <source>Relax function shown in the graph</source>
        <extracomment>Narrowest the node details panel gets (its placeholder and type texts wrap inside it).</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+23"/>
        <source>Function:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+34"/>
        <source>Model…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Use a built-in model, or open a model file (Ctrl+M)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Change…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Change the compilation target (devices found by the engine, or a JSON target)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Target</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+11"/>
        <location filename="../../app/pipeline_editor.py" line="+142"/>
        <source>Step parameters</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../../app/pipeline_editor.py" line="-83"/>
        <location line="+93"/>
        <source>Unknown pass {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="-90"/>
        <source>{0} is unavailable: {1}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+85"/>
        <source>Step {0} parameters</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Loading the pass catalogue…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../../app/run_controller.py" line="+54"/>
        <source>New document: Build &amp; Run to see its results.</source>
        <extracomment>``(kind, reply dict)`` after a build_run / compare / export_library answer (tests, screenshots). ``(kind, message)`` when a request failed.</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The model or target changed: Build &amp; Run again to see its results.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+20"/>
        <source>Device detection failed: {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+41"/>
        <source>CPU: generic llvm</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Edit as JSON…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Show in Build &amp;&amp; Run Panel</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+13"/>
        <source>The engine is still busy with the previous request (Stop to end it).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+47"/>
        <source>GPU</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+0"/>
        <source>CPU</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Building {0} step(s) for {1}…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+14"/>
        <source>Building and timing the baseline and the pipeline…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Building and exporting into {0}…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+6"/>
        <location filename="../../app/run_session.py" line="+95"/>
        <source>Stopping…</source>
        <extracomment>True while a run is in flight (the Stop action follows it). ``(input_script, input_key)``: the model loaded for the current run. A step&apos;s result of the current run. ``(revision, RunResult)`` of a run of the current revision.</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../../app/run_session.py" line="+7"/>
        <source>Stopping tuning; measured trials are kept and the run goes on…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+22"/>
        <source>%v / %m steps</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Running…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+10"/>
        <source>step {0}: {1}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Running step {0}: {1}…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Tuning: {0}/{1} trials</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+20"/>
        <source>Run stopped; measured trials are kept in the database</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+13"/>
        <source>Run: {0} step(s), {1} (passes {2})</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+3"/>
        <source>{0} from cache</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+2"/>
        <source>stopped</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+4"/>
        <source>step {0} failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../../app/step_inspector.py" line="+152"/>
        <location line="+59"/>
        <source>Step {0}: {1}</source>
        <extracomment>Most graphs kept in the cache (oldest dropped first). The diff/graph for the selected step is on screen (used by the benchmark).</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="-53"/>
        <source>{0} has not run yet.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+0"/>
        <source>{0} is disabled (skipped).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>{0} — not run yet; showing its input</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+8"/>
        <source>{0} failed — showing the last good module</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+6"/>
        <source>changed the module</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+0"/>
        <source>changed nothing</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <location line="+25"/>
        <source>Before {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="-17"/>
        <location line="+4"/>
        <source>Model input</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="-2"/>
        <source>Run the pipeline (F5) to see what each step does.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The pipeline is empty: drag passes from the Passes panel into the Pipeline list.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+91"/>
        <source>Cannot show the file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+5"/>
        <source>{0} — line {1}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>line {0}: {1}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Run the pipeline (F5) to see the model as a graph</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+25"/>
        <source>Graph unavailable: {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+15"/>
        <source>This module has no Relax function</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source> (no Relax function)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+83"/>
        <source>TensorIR</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+4"/>
        <source>TensorIR — {0}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../../app/step_reports.py" line="+133"/>
        <source>Click a node to see its op, attributes and input/output types.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Double-click a &lt;code&gt;call_tir&lt;/code&gt; node (or use its “show TensorIR” link) for the callee&apos;s TensorIR.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location filename="../../app/trust.py" line="+81"/>
        <source>Run custom Python code?</source>
        <extracomment>Tests/CLI: skip the question and answer this.</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&lt;b&gt;{where}&lt;/b&gt; has {count} step(s) with your own Python code. Running them executes the code below in the engine process, with your permissions (it can read and write your files). Run it only if you trust where this pipeline comes from. You are asked again when the code changes.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Trust and Run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Don&apos;t Run</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>CodeEditor</name>
    <message>
        <location filename="../../widgets/code_editor.py" line="+128"/>
        <source>line {line}: {message}</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>DiffView</name>
    <message>
        <location filename="../../widgets/diff_view.py" line="+84"/>
        <source>Show one function (+ added, − removed, ~ changed)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Hide unchanged functions</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Function:</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+30"/>
        <source>Show the traceback (your code&apos;s frames first)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+83"/>
        <location line="+16"/>
        <source>Before</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="-15"/>
        <location line="+16"/>
        <source>After</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+8"/>
        <source>{changed} changed, {added} added, {removed} removed functions · +{plus} −{minus} lines</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+5"/>
        <source>no change</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+22"/>
        <source>Last good IR (input of {step})</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Last good IR</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>{step} failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Step failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+6"/>
        <source>show the line in the editor</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+0"/>
        <source>show the file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&lt;b&gt;Error at {where}&lt;/b&gt;: {message} — &lt;a href=&apos;location&apos;&gt;{link}&lt;/a&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+14"/>
        <source>step failed at {where}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>step failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+21"/>
        <source>Hide traceback</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Details: traceback</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+43"/>
        <source>All functions</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>DocumentationDialog</name>
    <message>
        <location filename="../../app/help_controller.py" line="-127"/>
        <source>Documentation</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+16"/>
        <source>Open in Browser</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+26"/>
        <source>Cannot read {path}: {error}</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>GraphView</name>
    <message>
        <location filename="../../widgets/graph_view.py" line="+854"/>
        <location line="+26"/>
        <source>No graph</source>
        <extracomment>Below this view scale the overview (coarse bands of plain rectangles) replaces boxes, texts and arrows. Below this view scale the second text line (shape·dtype) of a node is not drawn. Tile size: layers per band, scene units per column; coarse overview bands. Layouts kept (per key and expansion).</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Empty function</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+333"/>
        <source>Cannot lay out the graph: {message}</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>LatencyChart</name>
    <message>
        <location filename="../../widgets/latency_chart.py" line="+73"/>
        <source>Compare with the baseline to see latencies here</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <location filename="../../app/code_dialogs.py" line="+30"/>
        <source>Close</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ModelDialog</name>
    <message>
        <location filename="../../widgets/model_dialog.py" line="+32"/>
        <source>TVMScript .py — a class decorated with @I.ir_module (or the text of mod.script())</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>nn.Module .py — defines `model` (tvm.relax.frontend.nn.Module) and `spec` (its export spec)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>ONNX .onnx — imported with relax.frontend.onnx.from_onnx, weights kept</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>PyTorch .pt2 (torch.export archive) or a torch .py with a torch.nn.Module and example inputs</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+18"/>
        <source>Open Model</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+15"/>
        <source>a .py, .onnx or .pt2 file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Browse…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+11"/>
        <source>&lt;b&gt;Built-in models&lt;/b&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&lt;b&gt;Or a model file&lt;/b&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Open model file</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Models (*.py *.onnx *.pt2);;TVMScript / nn.Module / torch (*.py);;ONNX (*.onnx);;torch.export (*.pt2);;All files (*)</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ParamEditor</name>
    <message>
        <location filename="../../widgets/param_editor.py" line="+429"/>
        <location line="+17"/>
        <source>No step selected.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+16"/>
        <source>This pass has no parameters.</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>PassPalette</name>
    <message>
        <location filename="../../widgets/pass_palette.py" line="+156"/>
        <source>Search passes (id, title, doc)…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+21"/>
        <source>Select or hover a pass to read its documentation. Drag it into the pipeline.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+66"/>
        <source>&lt;p&gt;&lt;code&gt;{id}&lt;/code&gt; is not in the catalogue.&lt;/p&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+3"/>
        <source>&lt;p&gt;&lt;b&gt;Unavailable:&lt;/b&gt; {reason}&lt;/p&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>not in this TVM build</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&lt;p&gt;&lt;i&gt;Runs your own Python code: the app asks before running it.&lt;/i&gt;&lt;/p&gt;</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+13"/>
        <source>&lt;p&gt;&lt;b&gt;Parameters&lt;/b&gt;&lt;/p&gt;</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>PipelineView</name>
    <message>
        <location filename="../../widgets/pipeline_view.py" line="+136"/>
        <source>Hide unchanged steps</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Hide the steps that did not change the module</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Duplicate</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Delete</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Drag passes here from the Passes panel
(or double-click a pass there).</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Nested pass</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Time</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Changed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+96"/>
        <source>yes</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+16"/>
        <source>Nested passes: {ran} ran, {changed} changed the module</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Nested passes: run the step to see them</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+23"/>
        <source>Run to this step</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>QtPassPaletteModel</name>
    <message>
        <location filename="../../widgets/pass_palette.py" line="-222"/>
        <location line="+13"/>
        <source>Pass</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+34"/>
        <source>not available in this TVM build</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&lt;b&gt;{title}&lt;/b&gt; — unavailable: {reason}</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>QtPipelineModel</name>
    <message>
        <location filename="../../widgets/step_model.py" line="+61"/>
        <source>not run</source>
        <extracomment>MIME type of a pass dragged out of the palette: UTF-8 JSON ``{&quot;pass_id&quot;: ...}``. MIME type of steps dragged inside the pipeline list: UTF-8 JSON ``{&quot;uids&quot;: [...]}``. Human labels for step states (English; shown through ``QtPipelineModel.tr``).</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>running…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>changed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>unchanged</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>failed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>skipped</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>cancelled</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+266"/>
        <source>cached</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+2"/>
        <source>unknown pass</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+32"/>
        <source>state: {state}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+2"/>
        <source>time: {time}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source> (cached)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+2"/>
        <source>params: {params}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+5"/>
        <source>error: {message}</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>RunPanel</name>
    <message>
        <location filename="../../widgets/run_panel.py" line="+137"/>
        <source>Device and target to build for (devices detected by the engine)</source>
        <extracomment>Module choices of the &quot;Module&quot; combo (data values). Item-data role marking the target list&apos;s custom entry (its text is translated).</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Advanced…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Edit the target as JSON (checked by the engine)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Detect devices again</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Final module (all steps)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Module after the selected step</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Random, seed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+2"/>
        <source>File</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+7"/>
        <source>.npy / .npz (arrays named like the inputs)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+28"/>
        <source>repeats</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+2"/>
        <source>× runs</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Target</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Module</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <location line="+118"/>
        <source>Inputs</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="-117"/>
        <source>Check</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Build &amp;&amp; Run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Build the module, run it, time it and check it against the unoptimized model (Ctrl+B)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Compare with Baseline</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Build the model as loaded (default pipeline) and this pipeline; run both on the same inputs</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Export Library…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Build and write model.so, weights.npz, model.json and deploy.py into a folder</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Stop</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+15"/>
        <source>Build &amp; Run (Ctrl+B) to see outputs, latency and the numerical check.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+28"/>
        <source>CPU: generic llvm</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+16"/>
        <source>Custom: {target}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+46"/>
        <source>NumPy arrays (*.npy *.npz);;All files (*)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Export the built library into</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+33"/>
        <source>Built and ran</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+2"/>
        <source>median {time}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+2"/>
        <source>check passed</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+0"/>
        <source>check FAILED</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+14"/>
        <source>speed-up {value}×</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Compared: speed-up {value}× over the baseline</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Last Build &amp;amp; Run</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+22"/>
        <source>Exported {library}; run it with: python {script}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Exported</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Run it: {command}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+9"/>
        <source>failed</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>ShortcutsDialog</name>
    <message>
        <location filename="../../app/help_controller.py" line="+13"/>
        <source>Keyboard Shortcuts</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Menu</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Action</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Shortcut</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>TargetEditorDialog</name>
    <message>
        <location filename="../../widgets/target_editor.py" line="+33"/>
        <source>Compilation target (JSON)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+5"/>
        <source>A TVM target as a JSON object with a &lt;code&gt;kind&lt;/code&gt;, e.g. {examples}. The engine checks it with &lt;code&gt;tvm.target.Target&lt;/code&gt;.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+2"/>
        <source> or </source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Check</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+31"/>
        <source>Checking with the engine…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+9"/>
        <source>the engine refused this target</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+6"/>
        <source>✓ valid: {kind} (keys: {keys})</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>✓ valid: {kind}</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>TuningPanel</name>
    <message>
        <location filename="../../widgets/tuning_panel.py" line="+31"/>
        <source>Task</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Trials</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Best latency</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Errors</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Status</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+15"/>
        <location line="+42"/>
        <source>No tuning step has run yet. Add a MetaSchedule step (relax.MetaScheduleTuneTIR / TuneIRMod) and run.</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="-35"/>
        <source>%v / %m trials</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Stop Tuning</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>End tuning within a few seconds; what was measured is kept in the database and the pipeline goes on (the apply step uses it)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+42"/>
        <source>Stopping tuning after this round; measured trials are kept…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Tuning: {step}…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+12"/>
        <source> — stopped; measured trials are kept</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+0"/>
        <source> — done</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+3"/>
        <source>&lt;b&gt;{pass_id}&lt;/b&gt;: {done} / {total} trials, {elapsed} s, runner {runner}</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+11"/>
        <source> (reused)</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Database: {path}</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>_ChoiceField</name>
    <message>
        <location filename="../../widgets/param_editor.py" line="-284"/>
        <source>{value} (not a known choice)</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>_FileField</name>
    <message>
        <location line="+104"/>
        <source>Browse…</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Choose {name}</source>
        <extracomment>hook for tests: returns a chosen path or &quot;&quot; (defaults to a QFileDialog)</extracomment>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>_JsonField</name>
    <message>
        <location line="+58"/>
        <source>not valid JSON (line {line}, column {column}): {message}</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>_ListField</name>
    <message>
        <location line="-148"/>
        <source>Add</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Remove</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Up</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Down</source>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+22"/>
        <source>Add item</source>
        <extracomment>hook for tests and scripted use: returns the text of a new free-form item, or None</extracomment>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>_NullableField</name>
    <message>
        <location line="+158"/>
        <source>None</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>_Overview</name>
    <message>
        <location filename="../../widgets/graph_view.py" line="+242"/>
        <source>Overview: click or drag to move the view</source>
        <translation type="unfinished"></translation>
    </message>
</context>
<context>
    <name>error_trace</name>
    <message>
        <location filename="../../widgets/error_trace.py" line="+135"/>
        <source>In your code (innermost last):</source>
        <extracomment>Pseudo file names of custom steps&apos; sources (``emit.custom_label``).</extracomment>
        <translation type="unfinished"></translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Full traceback:</source>
        <translation type="unfinished"></translation>
    </message>
</context>
</TS>
