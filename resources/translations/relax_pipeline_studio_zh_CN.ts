<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name></name>
    <message>
        <location filename="../../app/appearance.py" line="+93"/>
        <source>&amp;Theme</source>
        <extracomment>The theme was applied (``system``, ``light``, ``dark``). hook for tests: shows the &quot;applies at the next start&quot; note</extracomment>
        <translation>主题(&amp;T)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;System</source>
        <translation>跟随系统(&amp;S)</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>&amp;Light</source>
        <translation>浅色(&amp;L)</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>&amp;Dark</source>
        <translation>深色(&amp;D)</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>&amp;Language (applies at the next start)</source>
        <translation>语言（下次启动时生效）(&amp;L)</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>System</source>
        <translation>跟随系统</translation>
    </message>
    <message>
        <location line="+27"/>
        <source>Language</source>
        <translation>语言</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The new language is used the next time Relax Pipeline Studio starts.</source>
        <translation>新语言将在下次启动 Relax Pipeline Studio 时生效。</translation>
    </message>
    <message>
        <location filename="../../app/file_controller.py" line="+96"/>
        <source>Open pipeline</source>
        <extracomment>The title/model/target texts may have changed (saved under a new name ...).</extracomment>
        <translation>打开流水线</translation>
    </message>
    <message>
        <location filename="../../app/compare_controller.py" line="+154"/>
        <source>Current document</source>
        <extracomment>``MultiCompareResult`` when a comparison finished (tests, screenshots). The message when it failed.</extracomment>
        <translation>当前文档</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>Each pipeline is built for the current model {model} and target {target}, with the Build &amp; Run panel&apos;s inputs, timing and tolerances.</source>
        <translation>每条流水线都针对当前模型 {model} 和目标 {target} 构建，并使用“构建并运行”面板中的输入、计时和容差设置。</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Pipelines to compare</source>
        <translation>要比较的流水线</translation>
    </message>
    <message>
        <location line="+1"/>
        <location filename="../../app/file_controller.py" line="+0"/>
        <location line="+35"/>
        <source>Pipeline files (*.json *.rps.json);;All files (*)</source>
        <translation>流水线文件 (*.json *.rps.json);;所有文件 (*)</translation>
    </message>
    <message>
        <location line="+45"/>
        <source>Check two or more pipelines to compare.</source>
        <translation>请勾选两条或更多流水线进行比较。</translation>
    </message>
    <message>
        <location filename="../../app/bisect_controller.py" line="+206"/>
        <location filename="../../app/compare_controller.py" line="+4"/>
        <source>The Build &amp; Run panel&apos;s settings are not valid (see the panel).</source>
        <extracomment>``BisectReport`` when a bisection finished (tests, screenshots). The message when it failed. Save Reproducer… of the breaking step asked in the dialog (its uid; the main window saves it). The last report while the pipeline is unchanged since (its culprit&apos;s reproducer can be saved). The ``bisect`` request arguments of :attr:`report`.</extracomment>
        <translation>“构建并运行”面板的设置无效（请查看该面板）。</translation>
    </message>
    <message>
        <location filename="../../app/compare_controller.py" line="+20"/>
        <source>Building and timing {0} pipelines…</source>
        <translation>正在构建并计时 {0} 条流水线…</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Compared {0} pipelines.</source>
        <translation>已比较 {0} 条流水线。</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Comparison failed: {0}</source>
        <translation>比较失败：{0}</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>That is the current document.</source>
        <translation>这就是当前文档。</translation>
    </message>
    <message>
        <location filename="../../app/i18n.py" line="+108"/>
        <location filename="../../widgets/build_texts.py" line="+35"/>
        <source>Untitled pipeline</source>
        <extracomment>Choices of View ▸ Language: setting value → label (labels are shown in their own language). The name of a new document (``pipeline_model.document``), shown translated.</extracomment>
        <translation>未命名流水线</translation>
    </message>
    <message>
        <location filename="../../app/file_controller.py" line="-23"/>
        <location line="+3"/>
        <source>Cannot open pipeline</source>
        <translation>无法打开流水线</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Opened {0}</source>
        <translation>已打开 {0}</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Save pipeline</source>
        <translation>保存流水线</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>Cannot save pipeline</source>
        <translation>无法保存流水线</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Saved {0}</source>
        <translation>已保存 {0}</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Unsaved changes</source>
        <translation>未保存的更改</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The pipeline “{0}” has unsaved changes. Save them?</source>
        <translation>流水线“{0}”有未保存的更改。是否保存？</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>(none)</source>
        <translation>（无）</translation>
    </message>
    <message>
        <location line="+62"/>
        <source>Model not opened: its code was not trusted</source>
        <translation>模型未打开：其代码未被信任</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Model not opened</source>
        <translation>模型未打开</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Nothing ran: {0}</source>
        <translation>没有运行任何内容：{0}</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Loading model {0}…</source>
        <translation>正在加载模型 {0}…</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>Could not load {0}</source>
        <translation>无法加载 {0}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Cannot open model</source>
        <translation>无法打开模型</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Model {0}</source>
        <translation>模型 {0}</translation>
    </message>
    <message>
        <location line="+10"/>
        <location line="+7"/>
        <source>Export Python script</source>
        <translation>导出 Python 脚本</translation>
    </message>
    <message>
        <location line="-6"/>
        <source>The pass catalogue is still loading; export when it is there.</source>
        <translation>Pass 目录仍在加载；加载完成后再导出。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Python (*.py)</source>
        <translation>Python (*.py)</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Python with --build, --save-script, --save-json (*.py)</source>
        <translation>Python，含 --build、--save-script、--save-json (*.py)</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Cannot export script</source>
        <translation>无法导出脚本</translation>
    </message>
    <message>
        <source>Exporting {0} failed:</source>
        <translation type="vanished">导出 {0} 失败：</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Exported {0}</source>
        <translation>已导出 {0}</translation>
    </message>
    <message>
        <location filename="../../app/help_controller.py" line="+199"/>
        <source>Plug-in not loaded (the app runs without it; see Help ▸ Environment): {0}</source>
        <translation>插件未加载（应用在没有它的情况下运行；见 帮助 ▸ 运行环境）：{0}</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Documentation</source>
        <translation>文档(&amp;D)</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>&amp;Keyboard Shortcuts</source>
        <translation>键盘快捷键(&amp;K)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;Environment…</source>
        <translation>运行环境(&amp;E)…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>TVM and tvm-ffi versions, build flags, devices, codegens and known problems</source>
        <translation>TVM 与 tvm-ffi 版本、构建选项、设备、代码生成器以及已知问题</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;About Relax Pipeline Studio</source>
        <translation>关于 Relax Pipeline Studio(&amp;A)</translation>
    </message>
    <message>
        <location line="+44"/>
        <source>the engine did not answer</source>
        <translation>引擎没有应答</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>unknown (the engine has not answered yet)</source>
        <translation>未知（引擎尚未响应）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&lt;h3&gt;Relax Pipeline Studio {version}&lt;/h3&gt;&lt;p&gt;Build, preview and run Apache TVM Relax pass pipelines.&lt;/p&gt;&lt;p&gt;TVM {tvm} (tvm-ffi {ffi}), in the engine process.&lt;/p&gt;</source>
        <translation>&lt;h3&gt;Relax Pipeline Studio {version}&lt;/h3&gt;&lt;p&gt;构建、预览并运行 Apache TVM Relax Pass 流水线。&lt;/p&gt;&lt;p&gt;TVM {tvm}（tvm-ffi {ffi}），运行于引擎进程中。&lt;/p&gt;</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>not loaded: {0}</source>
        <translation>未加载：{0}</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>No plug-ins installed.</source>
        <translation>未安装插件。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Plug-ins</source>
        <translation>插件</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>About Relax Pipeline Studio</source>
        <translation>关于 Relax Pipeline Studio</translation>
    </message>
    <message>
        <location filename="../../app/main_window.py" line="+72"/>
        <source>Relax Pipeline Studio</source>
        <extracomment>Narrowest the Passes dock gets (the window fits 1024×700 with it).</extracomment>
        <translation>Relax Pipeline Studio</translation>
    </message>
    <message>
        <location line="+36"/>
        <source>Passes</source>
        <extracomment>Set by a termination signal: close without questions, keep the recovery copy.</extracomment>
        <translation>Pass 列表</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Pipeline</source>
        <translation>流水线</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Diff</source>
        <translation>差异</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Build &amp;&amp; Run</source>
        <translation>构建并运行</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Tuning</source>
        <translation>调优</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Profile</source>
        <translation>性能剖析</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>Engine: stopped</source>
        <translation>引擎：已停止</translation>
    </message>
    <message>
        <location line="+171"/>
        <source>&amp;Built-in Models</source>
        <translation>内置模型(&amp;B)</translation>
    </message>
    <message>
        <location filename="../../app/actions.py" line="+54"/>
        <source>&amp;New Pipeline</source>
        <translation>新建流水线(&amp;N)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Open Pipeline…</source>
        <translation>打开流水线(&amp;O)…</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;Save</source>
        <translation>保存(&amp;S)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Save &amp;As…</source>
        <translation>另存为(&amp;A)…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Open &amp;Model…</source>
        <translation>打开模型(&amp;M)…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Use a model file (TVMScript, nn.Module, ONNX, torch)</source>
        <translation>使用模型文件（TVMScript、nn.Module、ONNX、torch）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Export Python Script…</source>
        <translation>导出 Python 脚本(&amp;E)…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Write a standalone Python script that applies this pipeline</source>
        <translation>生成一个应用此流水线的独立 Python 脚本</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <location filename="../../app/main_window.py" line="-22"/>
        <source>&amp;Undo</source>
        <translation>撤销(&amp;U)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&amp;Redo</source>
        <translation>重做(&amp;R)</translation>
    </message>
    <message>
        <location filename="../../app/actions.py" line="+1"/>
        <source>&amp;Delete Step</source>
        <translation>删除步骤(&amp;D)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Run Pipeline</source>
        <translation>运行流水线(&amp;R)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Run every step (F5)</source>
        <translation>运行所有步骤 (F5)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Run &amp;to Selected Step</source>
        <translation>运行到所选步骤(&amp;T)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Run the steps up to the selected one</source>
        <translation>运行到所选步骤为止</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Stop</source>
        <translation>停止(&amp;S)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Stop the running step</source>
        <translation>停止正在运行的步骤</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Restart &amp;Engine</source>
        <translation>重启引擎(&amp;E)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Stop the engine process (also a step that does not return) and start a fresh one</source>
        <translation>停止引擎进程（包括不返回的步骤）并启动一个新的引擎</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Preferences…</source>
        <translation>首选项(&amp;P)…</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Engine watchdog limit and memory limit</source>
        <translation>引擎看门狗时限和内存上限</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Re-run &amp;Automatically After Edits</source>
        <translation>编辑后自动重新运行(&amp;A)</translation>
    </message>
    <message>
        <source>&amp;Fit Graph</source>
        <translation type="vanished">适应图形(&amp;F)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Fit &amp;Graph</source>
        <translation>适应图形(&amp;G)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Zoom &amp;In</source>
        <translation>放大(&amp;I)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Zoom into the graph (also + in the graph, or the mouse wheel)</source>
        <translation>放大图形（也可在图中按 + 或滚动鼠标滚轮）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Zoom O&amp;ut</source>
        <translation>缩小(&amp;U)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Zoom out of the graph (also - in the graph)</source>
        <translation>缩小图形（也可在图中按 -）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Actual Size</source>
        <translation>实际大小(&amp;A)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Find in Graph…</source>
        <translation>在图中查找(&amp;F)…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Find a node by name, op, callee or shape (Ctrl+F)</source>
        <translation>按名称、算子、被调函数或形状查找节点 (Ctrl+F)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Find &amp;Next</source>
        <translation>查找下一个(&amp;N)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Find Pre&amp;vious</source>
        <translation>查找上一个(&amp;V)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>E&amp;xpand All Groups</source>
        <translation>展开所有分组(&amp;X)</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Show every layer and module of the graph</source>
        <translation>显示图中的每一层和每个模块</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Collapse All Groups</source>
        <translation>折叠所有分组(&amp;C)</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Show each module group as one node</source>
        <translation>将每个模块分组显示为一个节点</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Show &amp;Overview</source>
        <translation>显示概览(&amp;O)</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>A minimap of the whole graph with the visible part framed</source>
        <translation>整张图的缩略图，框出当前可见部分</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>&amp;Reset Layout</source>
        <translation>重置布局(&amp;R)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Arrange the panes for the window&apos;s size (the graph gets at least half the width)</source>
        <translation>按窗口大小重新排列面板（图至少占一半宽度）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Build &amp;&amp; Run</source>
        <translation>构建并运行(&amp;B)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Build the module, run it, time it and check it (Ctrl+B)</source>
        <translation>构建模块、运行、计时并检查结果 (Ctrl+B)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Compare with Baseline</source>
        <translation>与基线比较(&amp;C)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Latency of this pipeline vs the unoptimized model</source>
        <translation>此流水线与未优化模型的延迟对比</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Compare &amp;Pipelines…</source>
        <translation>比较流水线(&amp;P)…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Build and time two or more pipeline files on this model, inputs and target</source>
        <translation>在此模型、输入和目标上构建并计时两个或更多流水线文件</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Reduce Repr&amp;oducer…</source>
        <translation>精简复现包(&amp;O)…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Shrink a saved reproducer&apos;s module while it still fails the same way</source>
        <translation>在仍以相同方式失败的前提下缩小已保存复现包中的模块</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;PassContext…</source>
        <translation>PassContext(&amp;P)…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>opt_level, config entries and disabled passes every step runs with</source>
        <translation>每个步骤运行时使用的 opt_level、配置项和禁用的 pass</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Profile &amp;Heat Overlay</source>
        <translation>性能热度叠加(&amp;H)</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Tint the graph&apos;s nodes by their share of the profiled run time</source>
        <translation>按各节点在剖析运行时间中的占比为图中节点着色</translation>
    </message>
    <message>
        <location filename="../../app/main_window.py" line="+15"/>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Open &amp;Recent</source>
        <translation>最近打开(&amp;R)</translation>
    </message>
    <message>
        <source>Built-in &amp;Models</source>
        <translation type="vanished">内置模型(&amp;M)</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>&amp;Edit</source>
        <translation>编辑(&amp;E)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;Run</source>
        <translation>运行(&amp;R)</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>&amp;Pipeline</source>
        <translation>流水线(&amp;P)</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Main</source>
        <translation>主工具栏</translation>
    </message>
    <message>
        <location line="+59"/>
        <source>The engine was restarted; your pipeline is unchanged.</source>
        <translation>引擎已重启；您的流水线未受影响。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Engine crashed and was restarted</source>
        <translation>引擎崩溃并已重启</translation>
    </message>
    <message>
        <location line="+50"/>
        <source>Restarting the engine…</source>
        <translation>正在重启引擎…</translation>
    </message>
    <message>
        <location filename="../../app/panels.py" line="+87"/>
        <source>Find a node by name, op, callee or shape</source>
        <extracomment>Narrowest the node details panel gets (its placeholder and type texts wrap inside it). Below this width of the graph area the node details go under the graph instead of beside it. Setting of View ▸ Show Overview (the graph&apos;s minimap). A button for the message&apos;s action (e.g. Restart Engine), shown only with such a message.</extracomment>
        <translation>按名称、算子、被调函数或形状查找节点</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Previous match (Shift+F3)</source>
        <translation>上一个匹配 (Shift+F3)</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Next match (F3)</source>
        <translation>下一个匹配 (F3)</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Close (Esc)</source>
        <translation>关闭 (Esc)</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Find:</source>
        <translation>查找：</translation>
    </message>
    <message>
        <location line="+22"/>
        <source>No matches</source>
        <translation>无匹配</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>{0} of {1}</source>
        <translation>第 {0} 个，共 {1} 个</translation>
    </message>
    <message>
        <location line="+50"/>
        <source>Relax function shown in the graph</source>
        <translation>图中显示的 Relax 函数</translation>
    </message>
    <message>
        <location line="+33"/>
        <source>Function:</source>
        <translation>函数：</translation>
    </message>
    <message>
        <location line="+66"/>
        <source>Model…</source>
        <translation>模型…</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Use a built-in model, or open a model file (Ctrl+M)</source>
        <translation>使用内置模型，或打开模型文件 (Ctrl+M)</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Change…</source>
        <translation>更改…</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Change the compilation target (devices found by the engine, or a JSON target)</source>
        <translation>更改编译目标（引擎检测到的设备，或 JSON 格式的目标）</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Target</source>
        <translation>目标</translation>
    </message>
    <message>
        <location line="+12"/>
        <location filename="../../app/pipeline_editor.py" line="+174"/>
        <source>Step parameters</source>
        <translation>步骤参数</translation>
    </message>
    <message>
        <location filename="../../app/pipeline_editor.py" line="-112"/>
        <location line="+123"/>
        <source>Unknown pass {0}</source>
        <translation>未知 Pass {0}</translation>
    </message>
    <message>
        <location line="-120"/>
        <source>{0} is unavailable: {1}</source>
        <translation>{0} 不可用：{1}</translation>
    </message>
    <message>
        <location line="+114"/>
        <source>Step {0} parameters</source>
        <translation>步骤 {0} 的参数</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Loading the pass catalogue…</source>
        <translation>正在加载 Pass 目录…</translation>
    </message>
    <message>
        <location filename="../../app/run_controller.py" line="+56"/>
        <source>New document: Build &amp; Run to see its results.</source>
        <extracomment>``(kind, reply dict)`` after a build_run / compare / export_library answer (tests, screenshots). ``(kind, message)`` when a request failed.</extracomment>
        <translation>新文档：请“构建并运行”以查看结果。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The model or target changed: Build &amp; Run again to see its results.</source>
        <translation>模型或目标已更改：请重新“构建并运行”以查看结果。</translation>
    </message>
    <message>
        <location line="+28"/>
        <source>Device detection failed: {0}</source>
        <translation>设备检测失败：{0}</translation>
    </message>
    <message>
        <location line="+45"/>
        <source>CPU: generic llvm</source>
        <translation>CPU：通用 llvm</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Edit as JSON…</source>
        <translation>以 JSON 编辑…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Show in Build &amp;&amp; Run Panel</source>
        <translation>在“构建并运行”面板中显示</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>The engine is still busy with the previous request (Stop to end it).</source>
        <translation>引擎仍在处理上一个请求（点击“停止”可结束）。</translation>
    </message>
    <message>
        <location line="+53"/>
        <source>GPU</source>
        <translation>GPU</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>CPU</source>
        <translation>CPU</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Building {0} step(s) for {1}…</source>
        <translation>正在为 {1} 构建 {0} 个步骤…</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>Building and timing the baseline and the pipeline…</source>
        <translation>正在构建基线和流水线并计时…</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>Building and exporting into {0}…</source>
        <translation>正在构建并导出到 {0}…</translation>
    </message>
    <message>
        <location filename="../../app/dialog_request.py" line="+41"/>
        <location filename="../../app/run_controller.py" line="+6"/>
        <location filename="../../app/run_session.py" line="+146"/>
        <source>Stopping…</source>
        <translation>正在停止…</translation>
    </message>
    <message>
        <location filename="../../app/run_session.py" line="-61"/>
        <source>Step {0} ({1}) waits for Run (F5): set its tuning budget, then run it.</source>
        <extracomment>True while a run is in flight (the Stop action follows it). ``(input_script, input_key)``: the model loaded for the current run. A step&apos;s result of the current run. ``(revision, RunResult)`` of a run of the current revision. Uids of the tuning steps the user ran (Run / Run to): automatic re-runs include only these. Holds automatic re-runs while edited custom-pass code is still being typed (``app.code_gate``).</extracomment>
        <translation>第 {0} 步（{1}）等待运行（F5）：先设置调优预算，再运行它。</translation>
    </message>
    <message>
        <location line="+68"/>
        <source>Stopping tuning; measured trials are kept and the run goes on…</source>
        <translation>正在停止调优；已测量的试验会保留，运行继续…</translation>
    </message>
    <message>
        <location line="+22"/>
        <source>%v / %m steps</source>
        <translation>%v / %m 步</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Running…</source>
        <translation>运行中…</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>step {0}: {1}</source>
        <translation>步骤 {0}：{1}</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Running step {0}: {1}…</source>
        <translation>正在运行步骤 {0}：{1}…</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Tuning: {0}/{1} trials</source>
        <translation>调优：{0}/{1} 次试验</translation>
    </message>
    <message>
        <location line="+21"/>
        <source>Run stopped; measured trials are kept in the database</source>
        <translation>运行已停止；已测量的试验保存在数据库中</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>Run: {0} step(s), {1} (passes {2})</source>
        <translation>运行：{0} 个步骤，{1}（Pass 用时 {2}）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>{0} from cache</source>
        <translation>{0} 来自缓存</translation>
    </message>
    <message>
        <location filename="../../app/reduce_controller.py" line="+111"/>
        <source>Checks: {0} · bindings: {1} (at the start: {2})</source>
        <translation>检查：{0} · 绑定：{1}（开始时：{2}）</translation>
    </message>
    <message>
        <location line="+54"/>
        <source>Not a reproducer folder: {0}</source>
        <extracomment>The JSON of the finished reduction (``folder``, ``bindings_before`` / ``after``, ``checks``, ``stopped``...). The message when it failed. The :class:`app.reproducer_controller.ReproducerController` that saves the reproducer to reduce.</extracomment>
        <translation>不是复现包文件夹：{0}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Step {0} ({1}), {2} binding(s) before it: {3}</source>
        <translation>步骤 {0}（{1}），之前有 {2} 个绑定：{3}</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Reproducer Folder</source>
        <translation>复现包文件夹</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Write the Reduced Reproducer Into</source>
        <translation>将精简后的复现包写入</translation>
    </message>
    <message>
        <location line="+45"/>
        <source>Choose a reproducer folder (one that Save Reproducer wrote).</source>
        <translation>请选择复现包文件夹（由“保存复现包”写出的文件夹）。</translation>
    </message>
    <message>
        <location line="+98"/>
        <source>Reduced from {0} to {1} binding(s) in {2} check(s) ({3}); written to {4} ({5})</source>
        <translation>从 {0} 个绑定缩减到 {1} 个，共 {2} 次检查（{3}）；已写入 {4}（{5}）</translation>
    </message>
    <message>
        <location filename="../../app/output_folder.py" line="+25"/>
        <source>the output folder</source>
        <translation>输出文件夹</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Cannot write into this folder</source>
        <translation>无法写入此文件夹</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Replace files?</source>
        <translation>替换文件？</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>{0} already holds {1}. Replace them? (The old files are not kept.)</source>
        <translation>{0} 中已有 {1}。要替换它们吗？（旧文件不会保留。）</translation>
    </message>
    <message>
        <source>{0} holds other files: choose a new or empty folder</source>
        <translation type="vanished">{0} 中有其他文件：请选择新的或空的文件夹</translation>
    </message>
    <message>
        <location filename="../../app/reduce_controller.py" line="-90"/>
        <source>The reduced reproducer needs a folder of its own.</source>
        <translation>精简后的复现包需要一个单独的文件夹。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Not reduced: choose another output folder.</source>
        <translation>未精简：请选择另一个输出文件夹。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Not reduced: reducing runs the reproducer&apos;s repro.py, and it was not consented to.</source>
        <translation>未精简：精简会运行复现包的 repro.py，而您未同意运行它。</translation>
    </message>
    <message>
        <location line="+40"/>
        <source>Checking that the reproducer fails as it says…</source>
        <translation>正在检查复现包是否按所述方式失败…</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>Stopping: the smallest module so far is written…</source>
        <translation>正在停止：写出目前最小的模块…</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>It reproduces; trying smaller modules…</source>
        <translation>已复现；正在尝试更小的模块…</translation>
    </message>
    <message>
        <source>Reduced from {0} to {1} binding(s) in {2} check(s) ({3}); written to {4} (python repro.py)</source>
        <translation type="vanished">经 {2} 次检查（{3}）从 {0} 个绑定精简到 {1} 个；已写入 {4}（python repro.py）</translation>
    </message>
    <message>
        <location line="+25"/>
        <source>Reduced reproducer written to {0}</source>
        <translation>精简后的复现包已写入 {0}</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Not reduced: {0}</source>
        <translation>未精简：{0}</translation>
    </message>
    <message>
        <source>dropped unreachable functions and unused bindings</source>
        <translation type="vanished">删除了不可达的函数和未使用的绑定</translation>
    </message>
    <message>
        <source>cut {0} after binding {1} (returns it)</source>
        <translation type="vanished">在绑定 {1} 之后截断 {0}（返回该值）</translation>
    </message>
    <message>
        <source>bindings before {0} of {1} became parameters</source>
        <translation type="vanished">{1} 中 {0} 之前的绑定变为参数</translation>
    </message>
    <message>
        <source>dimension {0} became {1}</source>
        <translation type="vanished">维度 {0} 变为 {1}</translation>
    </message>
    <message>
        <source>dropped the unused parameters of {0}</source>
        <translation type="vanished">删除了 {0} 未使用的参数</translation>
    </message>
    <message>
        <location line="+19"/>
        <source>{0}: {1} binding(s) left</source>
        <translation>{0}：剩余 {1} 个绑定</translation>
    </message>
    <message>
        <location line="+6"/>
        <location filename="../../app/run_session.py" line="+2"/>
        <source>stopped</source>
        <translation>已停止</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>no smaller module fails the same way</source>
        <translation>没有更小的模块以相同方式失败</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>{0} checks made</source>
        <translation>已进行 {0} 次检查</translation>
    </message>
    <message>
        <location filename="../../app/run_session.py" line="+4"/>
        <source>step {0} failed</source>
        <translation>步骤 {0} 失败</translation>
    </message>
    <message>
        <location filename="../../app/step_inspector.py" line="+150"/>
        <location line="+205"/>
        <source>Step {0}: {1}</source>
        <extracomment>The diff/graph for the selected step is on screen (used by the benchmark).</extracomment>
        <translation>步骤 {0}：{1}</translation>
    </message>
    <message>
        <location line="-200"/>
        <location line="+65"/>
        <source>{0} has not run yet.</source>
        <translation>{0} 尚未运行。</translation>
    </message>
    <message>
        <location line="-65"/>
        <source>{0} is disabled (skipped).</source>
        <translation>{0} 已禁用（跳过）。</translation>
    </message>
    <message>
        <location line="+1"/>
        <location line="+65"/>
        <source>{0} — not run yet; showing its input</source>
        <translation>{0} — 尚未运行；显示其输入</translation>
    </message>
    <message>
        <location line="-56"/>
        <source>unknown error</source>
        <translation>未知错误</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>{0} failed — showing the last good module</source>
        <translation>{0} 失败 — 显示最后一个正确的模块</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>changed the module</source>
        <translation>改变了模块</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>changed nothing</source>
        <translation>未做任何改变</translation>
    </message>
    <message>
        <location line="+10"/>
        <location line="+72"/>
        <source>Before {0}</source>
        <translation>{0} 之前</translation>
    </message>
    <message>
        <location line="-71"/>
        <source>After {0}</source>
        <translation>{0} 之后</translation>
    </message>
    <message>
        <location line="+20"/>
        <source>{0} — not run (an earlier step failed); showing the last good module</source>
        <translation>{0} — 未运行（之前的步骤失败）；显示最后一个正确的模块</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>{0} did not finish: the run was stopped.</source>
        <translation>{0} 未完成：运行已被停止。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>{0} — stopped; showing its input</source>
        <translation>{0} — 已停止；显示其输入</translation>
    </message>
    <message>
        <location filename="../../app/consent_service.py" line="+287"/>
        <location filename="../../app/step_inspector.py" line="+12"/>
        <source>step {0} ({1})</source>
        <translation>步骤 {0}（{1}）</translation>
    </message>
    <message>
        <location filename="../../app/profile_controller.py" line="+263"/>
        <location filename="../../app/step_inspector.py" line="+5"/>
        <location line="+5"/>
        <source>Model input</source>
        <translation>模型输入</translation>
    </message>
    <message>
        <location filename="../../app/step_inspector.py" line="+5"/>
        <source>Run the pipeline (F5) to see what each step does.</source>
        <translation>运行流水线 (F5) 以查看每个步骤的作用。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>The pipeline is empty: drag passes from the Passes panel into the Pipeline list.</source>
        <translation>流水线为空：请从“Pass 列表”面板将 Pass 拖入流水线列表。</translation>
    </message>
    <message>
        <location line="+21"/>
        <source>Step {0}</source>
        <translation>步骤 {0}</translation>
    </message>
    <message>
        <location line="+35"/>
        <source>Loading the module text…</source>
        <translation>正在加载模块文本…</translation>
    </message>
    <message>
        <location line="+38"/>
        <source>The engine was restarted and no longer holds this module; Run (F5) makes it again.</source>
        <translation>引擎已重启，不再保留此模块；运行（F5）会重新生成它。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>The module text could not be fetched: {0}</source>
        <translation>无法获取模块文本：{0}</translation>
    </message>
    <message>
        <location line="+76"/>
        <source>Cannot show the file</source>
        <translation>无法显示该文件</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>{0} — line {1}</source>
        <translation>{0} — 第 {1} 行</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>line {0}: {1}</source>
        <translation>第 {0} 行：{1}</translation>
    </message>
    <message>
        <location filename="../../app/graph_controller.py" line="+169"/>
        <source>Run the pipeline (F5) to see the model as a graph</source>
        <extracomment>Most graphs kept in the cache (oldest dropped first). Most collapsed views kept (each carries its function&apos;s whole group tree: ~10k groups for 50k nodes). Reply field of a whole graph&apos;s packed form, once made (the graph is let go again without packing it). A packed graph of a step shown again is decoded this long after it is shown (not for steps flipped through). Graphs not needed are packed or let go this long after a step is shown (its paint first). Another function was chosen (picker, opening a fused call): the selected step is to be shown again. The Relax functions of the shown module changed (their names): what function-name parameters offer. Whole graphs of at least this many nodes are packed while not needed (:meth:`_trim_graphs`).</extracomment>
        <translation>运行流水线 (F5) 以图形方式查看模型</translation>
    </message>
    <message>
        <location line="+81"/>
        <source>This step&apos;s module is no longer in the engine (it was restarted): run the pipeline again (F5) to see its graph</source>
        <translation>此步骤的模块已不在引擎中（引擎已重启）：请重新运行流水线（F5）以查看其计算图</translation>
    </message>
    <message>
        <location line="+3"/>
        <location line="+174"/>
        <source>Graph unavailable: {0}</source>
        <translation>图不可用：{0}</translation>
    </message>
    <message>
        <location line="-144"/>
        <source>(&apos;{0}&apos; is not in this module; showing {1})</source>
        <translation>（此模块中没有“{0}”；改为显示 {1}）</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>This module has no Relax function</source>
        <translation>此模块没有 Relax 函数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source> (no Relax function)</source>
        <translation>（无 Relax 函数）</translation>
    </message>
    <message>
        <location line="+173"/>
        <source>Searching…</source>
        <translation>正在搜索…</translation>
    </message>
    <message>
        <location line="+74"/>
        <source>Shown again next to this use (a stub): the value is defined once.</source>
        <translation>在此使用处再次显示（桩节点）：该值只定义一次。</translation>
    </message>
    <message>
        <location line="+47"/>
        <source>TensorIR</source>
        <translation>TensorIR</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>TensorIR — {0}</source>
        <translation>TensorIR — {0}</translation>
    </message>
    <message>
        <location filename="../../app/step_reports.py" line="+28"/>
        <source>Click a node to see its op, attributes and input/output types.</source>
        <translation>点击节点可查看其算子、属性以及输入/输出类型。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Double-click a &lt;code&gt;call_tir&lt;/code&gt; node (or use its “show TensorIR” link) for the callee&apos;s TensorIR.</source>
        <translation>双击 &lt;code&gt;call_tir&lt;/code&gt; 节点（或使用其“显示 TensorIR”链接）可查看被调用函数的 TensorIR。</translation>
    </message>
    <message>
        <location line="+19"/>
        <source>module group</source>
        <translation>模块分组</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>call of a Relax function</source>
        <translation>Relax 函数调用</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>{0} nodes inside</source>
        <translation>内含 {0} 个节点</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>module</source>
        <translation>模块</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>inputs</source>
        <translation>输入</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>outputs</source>
        <translation>输出</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>… {0} more</source>
        <translation>… 另有 {0} 个</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Click the group to expand it; click its frame title to collapse it again.</source>
        <translation>单击分组可展开；单击其边框标题可再次折叠。</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>show TensorIR</source>
        <translation>显示 TensorIR</translation>
    </message>
    <message>
        <source>Run custom Python code?</source>
        <extracomment>Tests/CLI: skip the question and answer this.</extracomment>
        <translation type="vanished">运行自定义 Python 代码？</translation>
    </message>
    <message>
        <source>&lt;b&gt;{where}&lt;/b&gt; has {count} step(s) with your own Python code. Running them executes the code below in the engine process, with your permissions (it can read and write your files). Run it only if you trust where this pipeline comes from. You are asked again when the code changes.</source>
        <translation type="vanished">&lt;b&gt;{where}&lt;/b&gt; 含有 {count} 个带自定义 Python 代码的步骤。运行它们会以您的权限在引擎进程中执行下面的代码（它可以读写您的文件）。请仅在信任此流水线来源时运行。代码变化后会再次询问。</translation>
    </message>
    <message>
        <location filename="../../app/consent_service.py" line="-101"/>
        <source>Run (F5) asks again; choose Trust and Run to allow it.</source>
        <extracomment>Largest file shown in the consent dialog (the rest is cut, and the dialog says so). The engine client&apos;s consent (``QtEngineWorker.consent``), kept equal to what was consented to. Tests/screenshots: skip the question; True consents to every item, False to none (nothing is remembered). Hashes of code the user typed in the app this session (their own code). Hashes refused this session (automatic re-runs do not ask about them again). Step uids whose code the user edited although it was never consented to (not asked on auto re-runs). Hashes consented to by ``override`` (tests): granted while it stays true, never remembered.</extracomment>
        <translation>运行（F5）时会再次询问；选择“信任并运行”即可允许。</translation>
    </message>
    <message>
        <source>Not run: its code was not allowed to run.</source>
        <translation type="vanished">未运行：其代码未获准运行。</translation>
    </message>
    <message>
        <source>Not run: you did not allow this code to run — {0}.</source>
        <translation type="vanished">未运行：你没有允许运行这段代码 —— {0}。</translation>
    </message>
    <message>
        <location line="+42"/>
        <source>Run code from this file?</source>
        <translation>运行来自此文件的代码？</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>&lt;b&gt;{where}&lt;/b&gt; would run {count} piece(s) of Python code that did not ship with the app:&lt;ul&gt;{lines}&lt;/ul&gt;Running it executes the code below with your permissions (it can read and write your files). Run it only if you trust where it comes from. You are asked again when the code changes.</source>
        <translation>&lt;b&gt;{where}&lt;/b&gt; 将运行 {count} 段并非随应用提供的 Python 代码：&lt;ul&gt;{lines}&lt;/ul&gt;运行它会以你的权限执行下面的代码（它可以读写你的文件）。只有在你信任其来源时才运行。代码改变时会再次询问你。</translation>
    </message>
    <message>
        <location line="-5"/>
        <source>&lt;b&gt;{where}&lt;/b&gt; would compile {count} set(s) of tuning records your own tuning did not measure:&lt;ul&gt;{lines}&lt;/ul&gt;A tuning record is a schedule replayed on your model and compiled into it; records outside the app&apos;s allow-list are refused in any case. Use them only if you trust where they come from. You are asked again when they change.</source>
        <translation>&lt;b&gt;{where}&lt;/b&gt; 将编译 {count} 组不是你自己的调优测得的调优记录：&lt;ul&gt;{lines}&lt;/ul&gt;调优记录是在你的模型上重放并编译进模型的调度；不在应用允许列表中的记录无论如何都会被拒绝。只有在你信任其来源时才使用它们。它们改变时会再次询问你。</translation>
    </message>
    <message>
        <location line="-43"/>
        <source>nothing ran: its code was not allowed to run.</source>
        <translation>未运行：其代码未获准运行。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>nothing ran: you did not allow this code to run — {0}.</source>
        <translation>未运行：你没有允许运行这段代码 —— {0}。</translation>
    </message>
    <message>
        <location line="+56"/>
        <source>step {0}</source>
        <translation>步骤 {0}</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Trust and Run</source>
        <extracomment>The code shown for each item, in order (what &quot;Trust and Run&quot; consents to). All the code shown, one block per item (tests read it).</extracomment>
        <translation>信任并运行</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Don&apos;t Run</source>
        <translation>不运行</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>Model file {0}: Python code that runs when the model is loaded</source>
        <translation>模型文件 {0}：加载模型时会运行的 Python 代码</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Pattern file {0}: Python code that runs when the step is built</source>
        <translation>模式文件 {0}：构建该步骤时会运行的 Python 代码</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>{0}: your custom pass code, run as a pipeline step</source>
        <translation>{0}：你的自定义 pass 代码，作为流水线步骤运行</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Reproducer script {0}: reduce runs it on every smaller module it tries</source>
        <translation>复现脚本 {0}：精简会在尝试的每个更小模块上运行它</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Tuning records {0}: schedules your own tuning did not measure, compiled into the model</source>
        <translation>调优记录 {0}：不是你自己的调优测得的调度，会被编译进模型</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>cannot be checked: {0}</source>
        <translation>无法检查：{0}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>(step {0})</source>
        <translation>（步骤 {0}）</translation>
    </message>
    <message>
        <location filename="../../app/undo_commands.py" line="+28"/>
        <source>Add {0}</source>
        <translation>添加 {0}</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>Delete {0} step(s)</source>
        <translation>删除 {0} 个步骤</translation>
    </message>
    <message>
        <location line="+28"/>
        <source>Move {0} step(s)</source>
        <translation>移动 {0} 个步骤</translation>
    </message>
    <message>
        <location line="+21"/>
        <source>Enable {0}</source>
        <translation>启用 {0}</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Disable {0}</source>
        <translation>禁用 {0}</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>Duplicate {0} step(s)</source>
        <translation>复制 {0} 个步骤</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>Set {0}</source>
        <translation>设置 {0}</translation>
    </message>
    <message>
        <location line="+30"/>
        <source>Set parameters</source>
        <translation>设置参数</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>Set model {0}</source>
        <translation>设置模型 {0}</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>Set target {0}</source>
        <translation>设置目标 {0}</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>Set PassContext</source>
        <translation>设置 PassContext</translation>
    </message>
    <message>
        <location filename="../../app/profile_controller.py" line="-88"/>
        <location line="+1"/>
        <source>profile</source>
        <extracomment>The profile shown changed (``None`` or a Profile). The key chosen in *Compare with* (&quot;&quot; = none).</extracomment>
        <translation>性能剖析</translation>
    </message>
    <message>
        <location line="+67"/>
        <source>{0} is not called from the graph shown (select the profiled step, function {1}).</source>
        <translation>当前显示的图中没有调用 {0}（请选择被剖析的步骤，函数 {1}）。</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>{0}: call {1} of {2} (activate again for the next)</source>
        <translation>{0}：第 {1} 次调用，共 {2} 次（再次激活可跳到下一个）</translation>
    </message>
    <message>
        <location filename="../../app/autosave.py" line="+87"/>
        <source>Could not write the recovery copy: {0}</source>
        <extracomment>Quiet time after an edit before the recovery copy is written. A recovery copy was written (its path).</extracomment>
        <translation>无法写入恢复副本：{0}</translation>
    </message>
    <message>
        <location line="+72"/>
        <source>Restore unsaved changes?</source>
        <translation>恢复未保存的更改？</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>an unsaved pipeline ({0})</source>
        <translation>一个未保存的流水线（{0}）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Relax Pipeline Studio did not exit normally. Unsaved changes to &lt;b&gt;{where}&lt;/b&gt; ({steps} steps) were saved at {when}.&lt;br&gt;&lt;br&gt;Restore them? The restored pipeline is marked modified; save it to keep it.</source>
        <translation>Relax Pipeline Studio 上次没有正常退出。对 &lt;b&gt;{where}&lt;/b&gt;（{steps} 个步骤）的未保存更改已于 {when} 保存。&lt;br&gt;&lt;br&gt;要恢复吗？恢复的流水线会被标记为已修改；请保存以保留它。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>{0} older recovery copies are discarded with this choice.</source>
        <translation>此选择会丢弃 {0} 个较旧的恢复副本。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Restore</source>
        <translation>恢复</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Discard</source>
        <translation>丢弃</translation>
    </message>
    <message>
        <location filename="../../app/preferences.py" line="+22"/>
        <source>Preferences</source>
        <translation>首选项</translation>
    </message>
    <message>
        <location line="+3"/>
        <source> s</source>
        <translation> 秒</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>A step (or model load) running longer is stopped and the engine restarted</source>
        <translation>运行时间更长的步骤（或模型加载）会被停止，并重启引擎</translation>
    </message>
    <message>
        <location line="+3"/>
        <source> MiB</source>
        <translation> MiB</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>no limit</source>
        <translation>无限制</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>An engine using more memory is stopped with a message naming the step, and restarted</source>
        <translation>使用更多内存的引擎会被停止（消息中会指出是哪个步骤），然后重启</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>An RPC tracker (python -m tvm.exec.rpc_tracker): Build &amp; Run lists its devices and can run there; empty for none</source>
        <translation>RPC 跟踪器（tvm.exec.rpc_tracker）：“构建并运行”会列出它的设备并可在其上运行；留空表示不用</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>The watchdog limit applies to the next request; the memory limit from the next engine start (Run ▸ Restart Engine).</source>
        <translation>看门狗时限从下一个请求起生效；内存上限从下次引擎启动起生效（运行 ▸ 重启引擎）。</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Step watchdog limit:</source>
        <translation>步骤看门狗时限：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Engine memory limit:</source>
        <translation>引擎内存上限：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>RPC tracker (HOST:PORT):</source>
        <translation>RPC 跟踪器（主机:端口）：</translation>
    </message>
    <message>
        <location filename="../../app/bisect_controller.py" line="-113"/>
        <source>model as loaded</source>
        <translation>加载的模型</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>without step {0}</source>
        <translation>去掉步骤 {0}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>yes</source>
        <translation>是</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>no</source>
        <translation>否</translation>
    </message>
    <message>
        <location line="+15"/>
        <source> Builds: {0} (budget {1}).</source>
        <translation> 构建次数：{0}（预算 {1}）。</translation>
    </message>
    <message>
        <location line="+102"/>
        <source>Running the pipeline…</source>
        <translation>正在运行流水线…</translation>
    </message>
    <message>
        <location line="+19"/>
        <source>Breaking step: {0} ({1})</source>
        <translation>出错的步骤：{0}（{1}）</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Find Breaking Step failed: {0}</source>
        <translation>查找出错步骤失败：{0}</translation>
    </message>
    <message>
        <location line="+20"/>
        <source>breaking step found by bisect: max |diff|/max |ref| {0}</source>
        <translation>二分查找发现的出错步骤：最大绝对误差/参照最大绝对值 {0}</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>breaking step found by bisect: {0}</source>
        <translation>二分查找发现的出错步骤：{0}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>(the pipeline passes without it)</source>
        <translation>（去掉它后流水线通过）</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>bisect: the model after this step is right (max |diff|/max |ref| {0})</source>
        <translation>二分查找：此步骤之后模型正确（最大绝对误差/参照最大绝对值 {0}）</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>bisect: the model after this step is wrong or fails ({0})</source>
        <translation>二分查找：此步骤之后模型错误或失败（{0}）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>max |diff|/max |ref| {0}</source>
        <translation>最大绝对误差/参照最大绝对值 {0}</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>bisect: skipped (the module after this step could not be completed)</source>
        <translation>二分查找：已跳过（此步骤之后的模块无法补全）</translation>
    </message>
    <message>
        <location filename="../../app/actions.py" line="-10"/>
        <source>Find Brea&amp;king Step…</source>
        <translation>查找出错步骤(&amp;K)…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Bisect the pipeline to the first step after which the built model is wrong</source>
        <translation>二分查找流水线中第一个使构建出的模型出错的步骤</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Where Values &amp;Diverge…</source>
        <translation>数值在何处偏离(&amp;D)…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Every intermediate value before and after the selected step, the first diverging one marked</source>
        <translation>比较所选步骤前后的每个中间值，并标出第一个偏离的值</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Save Reprod&amp;ucer of Failed Step…</source>
        <translation>保存失败步骤的复现包(&amp;U)…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>A folder with a standalone repro.py of plain TVM calls that fails the same way</source>
        <translation>一个文件夹，含只用 TVM 调用、以同样方式失败的独立 repro.py</translation>
    </message>
    <message>
        <location filename="../../app/reduce_controller.py" line="-168"/>
        <location filename="../../app/reproducer_controller.py" line="+81"/>
        <source>No step failed in the last run: nothing to reproduce.</source>
        <translation>上次运行没有失败的步骤：无需复现。</translation>
    </message>
    <message>
        <location filename="../../app/reproducer_controller.py" line="-5"/>
        <source>Save Reproducer Into</source>
        <extracomment>The folder when a reproducer was written. The message when it could not be written. The :class:`app.bisect_controller.BisectController` whose culprit can be saved (``None``: none).</extracomment>
        <translation>复现包保存到</translation>
    </message>
    <message>
        <location line="+64"/>
        <source>Saving a reproducer of step {0}…</source>
        <translation>正在保存步骤 {0} 的复现包…</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Reproducer saved to {0} (python repro.py)</source>
        <translation>复现包已保存到 {0}（python repro.py）</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>No reproducer: {0}</source>
        <translation>未能保存复现包：{0}</translation>
    </message>
    <message>
        <location filename="../../app/diverge_controller.py" line="+50"/>
        <source>ok</source>
        <extracomment>Item data: the graph node id of a row.</extracomment>
        <translation>正常</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>DIVERGES</source>
        <translation>偏离</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>no counterpart</source>
        <translation>无对应节点</translation>
    </message>
    <message>
        <location line="+34"/>
        <source>max |diff| / max |ref| = {0}</source>
        <translation>最大绝对误差 / 参照最大绝对值 = {0}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>the step changed the structure here</source>
        <translation>该步骤改变了此处的结构</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>shape {0}</source>
        <translation>形状 {0}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>first diverging value inside: {0}</source>
        <translation>内部第一个偏离的值：{0}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>likelier culprit: {0} (no counterpart before the step, and this value depends on it)</source>
        <translation>更可能的元凶：{0}（步骤之前没有对应值，而此值依赖于它）</translation>
    </message>
    <message>
        <location line="+90"/>
        <source>Step {0} ({1}): first diverging node: {2}</source>
        <translation>步骤 {0}（{1}）：第一个偏离的节点：{2}</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Step {0} ({1}): no node diverges beyond the tolerance.</source>
        <translation>步骤 {0}（{1}）：没有节点超出容差。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Likelier culprit: {0}: it has no counterpart before the step (the step changed the structure there) and the first diverging value depends on it.</source>
        <translation>更可能的元凶：{0}：它在步骤之前没有对应值（该步骤改变了那里的结构），而第一个偏离的值依赖于它。</translation>
    </message>
    <message>
        <location line="+46"/>
        <source>Select the step to look at (and check the Build &amp; Run panel&apos;s settings).</source>
        <extracomment>The reply when it finished (tests). The message when it failed.</extracomment>
        <translation>请选择要查看的步骤（并检查“构建并运行”面板的设置）。</translation>
    </message>
    <message>
        <location line="+21"/>
        <source>Building and running the modules before and after step {0}…</source>
        <translation>正在构建并运行步骤 {0} 前后的模块…</translation>
    </message>
    <message>
        <location line="+25"/>
        <source>Where Values Diverge failed: {0}</source>
        <translation>数值偏离分析失败：{0}</translation>
    </message>
    <message>
        <location line="+34"/>
        <source>Step {0} ({1}): where values diverge</source>
        <translation>步骤 {0}（{1}）：数值偏离位置</translation>
    </message>
    <message>
        <location line="+48"/>
        <source>The pipeline changed since: this table is of the pipeline as it was (run Where Values Diverge again).</source>
        <translation>流水线已更改：此表对应更改前的流水线（请再次运行“数值偏离位置”）。</translation>
    </message>
    <message>
        <location filename="../../app/step_reports.py" line="-30"/>
        <source>{0} ops, {1} weights</source>
        <translation>{0} 个算子，{1} 个权重</translation>
    </message>
    <message>
        <location filename="../../app/code_gate.py" line="+92"/>
        <source>The edited code does not parse yet (line {0}); it runs once it does, or on Run (F5).</source>
        <extracomment>How long edited code must stay unchanged before an automatic re-run may run it (milliseconds). ``(uid, name) -&gt; text`` of every code parameter as the last run (or the document&apos;s load) had it. The code editor showing parameter ``name`` of step ``uid``, or ``None`` (set by the main window).</extracomment>
        <translation>编辑后的代码尚无法解析（第 {0} 行）；能解析后或按“运行”(F5) 时才会运行。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Still typing in a string or brackets: the edited code runs when the cursor leaves them or the editor, or on Run (F5).</source>
        <translation>仍在字符串或括号中输入：光标离开它们或编辑器后，或按“运行”(F5) 时，编辑后的代码才会运行。</translation>
    </message>
</context>
<context>
    <name>BisectDialog</name>
    <message>
        <location filename="../../app/bisect_controller.py" line="-248"/>
        <source>Find Breaking Step</source>
        <extracomment>Save Reproducer… of the breaking step (offered when TVM&apos;s own default pipeline fails on the model).</extracomment>
        <translation>查找出错步骤</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Find</source>
        <translation>查找</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Save Reproducer…</source>
        <translation>保存复现包…</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Tested</source>
        <translation>已测试</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Result</source>
        <translation>结果</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Built</source>
        <translation>已构建</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>max |diff| / max |ref|</source>
        <translation>最大绝对误差 / 参照最大绝对值</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>ms</source>
        <translation>毫秒</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>The first step after which the built model is wrong or fails to build:</source>
        <translation>第一个使构建出的模型出错或无法构建的步骤：</translation>
    </message>
    <message>
        <location line="+55"/>
        <source>The default-pipeline reference failed ({0}). Reference used: {1}</source>
        <translation>默认流水线构建的参考结果失败（{0}）。改用的参考：{1}</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>TVM&apos;s default pipeline crashes on this model too: this is a TVM bug.</source>
        <translation>TVM 的默认流水线在此模型上同样崩溃：这是 TVM 的缺陷。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>TVM&apos;s default pipeline fails to build this model too: this is a TVM bug.</source>
        <translation>TVM 的默认流水线同样无法构建此模型：这是 TVM 的缺陷。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>TVM&apos;s default pipeline fails at run time on this model too: this is a TVM bug.</source>
        <translation>TVM 的默认流水线在此模型上同样运行失败：这是 TVM 的缺陷。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>TVM&apos;s default pipeline fails on this model too: this is a TVM bug.</source>
        <translation>TVM 的默认流水线在此模型上同样失败：这是 TVM 的缺陷。</translation>
    </message>
</context>
<context>
    <name>BisectReport</name>
    <message>
        <location filename="../../app/bisect_texts.py" line="+21"/>
        <source>step {0} ({1}) failed while the pipeline ran: {2}</source>
        <extracomment>The verdicts of ``bisect_tvm`` (context ``BisectReport``).</extracomment>
        <translation>步骤 {0}（{1}）在流水线运行时失败：{2}</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>culprit: step {0} ({1}) produced IR that is not well-formed: {2}; step {3} ({4}) failed on it: {5}</source>
        <translation>出错步骤：步骤 {0}（{1}）产生了不合规范（not well-formed）的 IR：{2}；步骤 {3}（{4}）在其上失败：{5}</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>no step changed the module: nothing to bisect (the model as loaded builds and runs)</source>
        <translation>没有步骤改变模块：无可二分（加载时的模型可以构建并运行）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>no step changed the module, and the model as loaded gives a wrong result even with no step (TVM&apos;s default pipeline: a TVM bug): {0}</source>
        <translation>没有步骤改变模块，且加载时的模型即使不经任何步骤也给出错误结果（TVM 的默认流水线：TVM 的缺陷）：{0}</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>the model does not build even with no step (TVM&apos;s default pipeline fails on it: a TVM bug); no step to blame: {0}</source>
        <translation>即使不经任何步骤，模型也无法构建（TVM 的默认流水线在其上失败：TVM 的缺陷）；没有可归咎的步骤：{0}</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>the model does not run even with no step (TVM&apos;s default pipeline fails on it: a TVM bug); no step to blame: {0}</source>
        <translation>即使不经任何步骤，模型也无法运行（TVM 的默认流水线在其上失败：TVM 的缺陷）；没有可归咎的步骤：{0}</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>the model crashes even with no step (TVM&apos;s default pipeline fails on it: a TVM bug); no step to blame: {0}</source>
        <translation>即使不经任何步骤，模型也会崩溃（TVM 的默认流水线在其上失败：TVM 的缺陷）；没有可归咎的步骤：{0}</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>the final module builds and runs; its numbers could not be checked (no reference)</source>
        <translation>最终模块可以构建并运行；其数值无法检查（没有参照）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>the pipeline is correct: the final module matches the reference (max |diff|/max |ref| = {0})</source>
        <translation>流水线正确：最终模块与参照一致（最大绝对误差/参照最大绝对值 = {0}）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>TVM&apos;s default pipeline fails on the model as loaded, and leaving single steps out of the pipeline does not help: no step to blame ({0})</source>
        <translation>TVM 的默认流水线在加载时的模型上失败，从流水线中逐个去掉步骤也无济于事：没有可归咎的步骤（{0}）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>every module fails, the model as loaded (completed with the stock lowering) too, and leaving single steps out does not help: no step to blame ({0})</source>
        <translation>每个模块都失败，加载时的模型（用标准降级补全后）也失败，逐个去掉步骤也无济于事：没有可归咎的步骤（{0}）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>the failure starts in steps {0}..{1}; the modules between could not be completed (skipped), and leaving single steps out did not isolate one</source>
        <translation>失败始于步骤 {0}..{1}；其间的模块无法补全（已跳过），逐个去掉步骤也未能找出单个步骤</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>culprit: step {0} ({1}): the first step after which the result is wrong or the build fails ({2})</source>
        <translation>出错步骤：步骤 {0}（{1}）：在它之后结果首次出错或构建失败（{2}）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>culprit: step {0} ({1}): leaving it out makes the pipeline pass ({2})</source>
        <translation>出错步骤：步骤 {0}（{1}）：去掉它流水线就能通过（{2}）</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>no verdict yet</source>
        <translation>尚无结论</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>cancelled;</source>
        <translation>已取消；</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>pass</source>
        <translation>通过</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>fail</source>
        <translation>失败</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>skipped</source>
        <translation>已跳过</translation>
    </message>
</context>
<context>
    <name>CodeEditor</name>
    <message>
        <location filename="../../widgets/code_editor.py" line="+206"/>
        <source>line {line}: {message}</source>
        <extracomment>True from a key the user types here until the editor loses the focus (see :meth:`edit_in_progress`).</extracomment>
        <translation>第 {line} 行：{message}</translation>
    </message>
</context>
<context>
    <name>CompareDialog</name>
    <message>
        <location filename="../../app/compare_controller.py" line="-228"/>
        <source>Compare Pipelines</source>
        <extracomment>Item data: the pipeline file of a candidate (&quot;&quot; for the current document).</extracomment>
        <translation>比较流水线</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Add Files…</source>
        <translation>添加文件…</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Remove</source>
        <translation>移除</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Compare</source>
        <translation>比较</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>Pipelines to compare (checked):</source>
        <translation>要比较的流水线（已勾选）：</translation>
    </message>
</context>
<context>
    <name>CompareView</name>
    <message>
        <location filename="../../widgets/compare_view.py" line="+94"/>
        <source>Pipeline</source>
        <translation>流水线</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Build</source>
        <translation>构建</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Median</source>
        <translation>中位数</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Spread</source>
        <translation>离散度</translation>
    </message>
    <message>
        <source>vs fastest</source>
        <translation type="vanished">相对最快</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Check</source>
        <translation>校验</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Problem</source>
        <translation>问题</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Use this one</source>
        <translation>使用此流水线</translation>
    </message>
    <message>
        <location line="+20"/>
        <source>Compare two or more pipelines to see them side by side.</source>
        <translation>比较两条或更多流水线，并排查看结果。</translation>
    </message>
    <message>
        <location line="+24"/>
        <source>pass</source>
        <translation>通过</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>FAIL</source>
        <translation>失败</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>[outputs too small to check]</source>
        <translation>[输出过小，无法校验]</translation>
    </message>
    <message>
        <source>fastest is %1× faster than the slowest</source>
        <translation type="vanished">最快的比最慢的快 %1×</translation>
    </message>
    <message>
        <location line="+19"/>
        <source>%1 vs %2: identical final IR</source>
        <translation>%1 对比 %2：最终 IR 相同</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>%1 vs %2: %3 changed, %4 added, %5 removed functions</source>
        <translation>%1 对比 %2：%3 个函数改变，%4 个新增，%5 个删除</translation>
    </message>
    <message>
        <source>Fastest: %1</source>
        <translation type="vanished">最快：%1</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>No pipeline ran</source>
        <translation>没有流水线运行</translation>
    </message>
    <message>
        <location line="-90"/>
        <source>vs first</source>
        <translation>对比第一个</translation>
    </message>
    <message>
        <location line="+45"/>
        <source>bars: median; whiskers: interquartile range of the repeats</source>
        <translation>条形：中位数；须线：各次重复的四分位距</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>(first)</source>
        <translation>（第一个）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>min – max: %1 – %2 over %3 repeats</source>
        <translation>最小 – 最大：%1 – %2（共 %3 次重复）</translation>
    </message>
    <message>
        <location line="+31"/>
        <source>Fastest: %1 (significantly faster than every other)</source>
        <translation>最快：%1（显著快于其他所有流水线）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>No fastest: every pipeline compiles to the same build</source>
        <translation>没有最快者：所有流水线编译出的是同一构建</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Fastest by median: %1, but not significantly faster than every other (the spread of the repeats covers the difference)</source>
        <translation>按中位数最快：%1，但并不显著快于其他所有流水线（重复测量的离散程度覆盖了差异）</translation>
    </message>
</context>
<context>
    <name>DiffView</name>
    <message>
        <location filename="../../widgets/diff_view.py" line="+178"/>
        <source>  … [{0} more characters not shown]</source>
        <extracomment>Module texts with more lines than this (both sides together) are diffed off the GUI thread, and more rows than this are put into the editors piece by piece. Module texts with more lines than this (both sides together) are diffed in the diff process (:mod:`pipeline_model.diff_process`): in a thread of this process the diff&apos;s long string operations hold the GIL the GUI thread needs. Rows appended to each editor per piece of a piecewise fill (~1 ms per side on the 2-core machine). GUI-thread time a piecewise fill may take per event-loop turn before it yields. Longest line put into an editor as it is; a longer one is cut there with a note of what was left out. (An 800-layer model&apos;s ``forward`` signature is one 530,000-character line: laying it out for the first paint took ~85 ms of GUI-thread time per side, and no one reads it past the first screens.) Whether views diff large texts in the diff process (``RPS_DIFF_PROCESS=0``: always in a thread). An editor holding more lines than this is emptied in an event-loop turn of its own before a fill (dropping a 50k-line document costs ~10 ms).</extracomment>
        <translation>  … [另有 {0} 个字符未显示]</translation>
    </message>
    <message>
        <location line="+105"/>
        <source>Show one function (+ added, − removed, ~ changed)</source>
        <extracomment>The diff asked for last is on screen, all its rows in the editors (large diffs are computed on a worker thread and put in by pieces; also after a re-render: function chooser, hide-unchanged). The diff asked for last is computed (``module_diff`` is set); its rows may still be coming in. Texts with more lines than this are diffed in a diff process: ``diff_process``, or the shared one (``pipeline_model.diff_process.shared()``) when that is None; never when ``use_diff_process`` is false.</extracomment>
        <translation>只显示一个函数（+ 新增，− 删除，~ 修改）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Hide unchanged functions</source>
        <translation>隐藏未改变的函数</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Function:</source>
        <translation>函数：</translation>
    </message>
    <message>
        <location line="+34"/>
        <source>Show the traceback (your code&apos;s frames first)</source>
        <translation>显示回溯（优先显示您代码中的帧）</translation>
    </message>
    <message>
        <location line="+87"/>
        <location line="+16"/>
        <source>Before</source>
        <translation>之前</translation>
    </message>
    <message>
        <location line="-15"/>
        <location line="+16"/>
        <source>After</source>
        <translation>之后</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Comparing {0} lines…</source>
        <translation>正在比较 {0} 行…</translation>
    </message>
    <message>
        <location line="+23"/>
        <source>Cannot compare: {0}</source>
        <translation>无法比较：{0}</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>{changed} changed, {added} added, {removed} removed functions · +{plus} −{minus} lines</source>
        <translation>函数：{changed} 个修改，{added} 个新增，{removed} 个删除 · +{plus} −{minus} 行</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>no change</source>
        <translation>无变化</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>{0}: not run (an earlier step failed: {1})</source>
        <translation>{0}：未运行（之前的步骤失败：{1}）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>{0}: not run (an earlier step failed)</source>
        <translation>{0}：未运行（之前的步骤失败）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>not run (an earlier step failed)</source>
        <translation>未运行（之前的步骤失败）</translation>
    </message>
    <message>
        <location line="+22"/>
        <source>Last good IR (input of {step})</source>
        <translation>最后一个正确的 IR（{step} 的输入）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Last good IR</source>
        <translation>最后一个正确的 IR</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>{step} failed</source>
        <translation>{step} 失败</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Step failed</source>
        <translation>步骤失败</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>show the line in the editor</source>
        <translation>在编辑器中显示该行</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>show the file</source>
        <translation>显示该文件</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&lt;b&gt;Error at {where}&lt;/b&gt;: {message} — &lt;a href=&apos;location&apos;&gt;{link}&lt;/a&gt;</source>
        <translation>&lt;b&gt;错误位于 {where}&lt;/b&gt;：{message} — &lt;a href=&apos;location&apos;&gt;{link}&lt;/a&gt;</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>step failed at {where}</source>
        <translation>步骤在 {where} 失败</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>step failed</source>
        <translation>步骤失败</translation>
    </message>
    <message>
        <location line="+21"/>
        <source>Hide traceback</source>
        <translation>隐藏回溯</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Details: traceback</source>
        <translation>详情：回溯</translation>
    </message>
    <message>
        <location line="+43"/>
        <source>All functions</source>
        <translation>所有函数</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>added</source>
        <translation>新增</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>removed</source>
        <translation>移除</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>changed</source>
        <translation>有改变</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>unchanged</source>
        <translation>无改变</translation>
    </message>
</context>
<context>
    <name>DivergeDialog</name>
    <message>
        <location filename="../../app/diverge_controller.py" line="-237"/>
        <source>Where Values Diverge</source>
        <translation>数值在何处偏离</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Node</source>
        <translation>节点</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Calls</source>
        <translation>调用</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Shape</source>
        <translation>形状</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>max |diff| / max |ref|</source>
        <translation>最大绝对误差 / 参照最大绝对值</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Show on graph</source>
        <translation>在图上显示</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Colour the step&apos;s graph by each node&apos;s error (Esc in the graph clears it; any edit of the pipeline too)</source>
        <translation>按每个节点的误差为该步骤的图着色（在图中按 Esc 或编辑流水线即清除）</translation>
    </message>
</context>
<context>
    <name>DocumentationDialog</name>
    <message>
        <location filename="../../app/help_controller.py" line="-199"/>
        <source>Documentation</source>
        <extracomment>Where an installed copy keeps the documentation, under its data prefix (pyproject ``data-files``). Documents for those who work on the app, not with it: not listed by Help ▸ Documentation.</extracomment>
        <translation>文档</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>Open in Browser</source>
        <translation>在浏览器中打开</translation>
    </message>
    <message>
        <location line="+26"/>
        <source>Cannot read {path}: {error}</source>
        <translation>无法读取 {path}：{error}</translation>
    </message>
</context>
<context>
    <name>EnvDialog</name>
    <message>
        <location filename="../../widgets/env_dialog.py" line="+33"/>
        <source>Environment</source>
        <translation>运行环境</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>Copy</source>
        <translation>复制</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Copy the whole report as plain text</source>
        <translation>以纯文本复制整份报告</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Refresh</source>
        <translation>刷新</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Asking the engine…</source>
        <translation>正在询问引擎…</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>No problems found.</source>
        <translation>未发现问题。</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Error</source>
        <translation>错误</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Warning</source>
        <translation>警告</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Fix:</source>
        <translation>修复方法：</translation>
    </message>
</context>
<context>
    <name>EnvReport</name>
    <message>
        <location filename="../../pipeline_model/env_report.py" line="+30"/>
        <source>the compiler (engine process)</source>
        <extracomment>Severity of a problem: ``error`` (something will crash or cannot work) or ``warning``. Distributions whose presence and version the report lists (name -&gt; what it is for; translated where shown).</extracomment>
        <translation>编译器（引擎进程）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>TVM&apos;s FFI (pinned: 0.1.14.post1)</source>
        <translation>TVM 的 FFI（固定版本：0.1.14.post1）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>arrays</source>
        <translation>数组</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>needed by MetaSchedule tuning</source>
        <translation>MetaSchedule 调优需要</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>MetaSchedule&apos;s default cost model</source>
        <translation>MetaSchedule 的默认代价模型</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>MetaSchedule workers</source>
        <translation>MetaSchedule 工作进程</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>the RPC tracker (remote devices)</source>
        <translation>RPC 跟踪器（远程设备）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>PyTorch importer</source>
        <translation>PyTorch 导入器</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>ONNX importer</source>
        <translation>ONNX 导入器</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>ONNX Runtime comparison</source>
        <translation>ONNX Runtime 对比</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Hugging Face models</source>
        <translation>Hugging Face 模型</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>the desktop app</source>
        <translation>桌面应用</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>pass kind</source>
        <extracomment>What each plug-in group adds, as the report names it (translated where shown).</extracomment>
        <translation>Pass 种类</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>model format</source>
        <translation>模型格式</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>DLight rule</source>
        <translation>DLight 规则</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>engine command</source>
        <translation>引擎命令</translation>
    </message>
    <message>
        <location line="+158"/>
        <source>the engine could not start: {0}</source>
        <extracomment>Other distribution names of the same package (checked when the main name is absent). The tvm-ffi version known to work (see docs and the engine&apos;s refusal message).</extracomment>
        <translation>引擎无法启动：{0}</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>apache-tvm is not installed: nothing can run</source>
        <translation>未安装 apache-tvm：无法运行任何内容</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>psutil is missing: MetaSchedule tuning refuses to start without it</source>
        <translation>缺少 psutil：没有它 MetaSchedule 调优无法启动</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>xgboost is missing: MetaSchedule&apos;s default cost model (xgb) imports it</source>
        <translation>缺少 xgboost：MetaSchedule 的默认代价模型（xgb）需要导入它</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>cloudpickle is missing: MetaSchedule&apos;s workers need it</source>
        <translation>缺少 cloudpickle：MetaSchedule 的工作进程需要它</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>a plug-in could not be loaded (the app runs without it): {0}</source>
        <translation>一个插件无法加载（应用在没有它的情况下运行）：{0}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>reinstall or uninstall its package</source>
        <translation>重新安装或卸载它的包</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>this TVM build has no LLVM: nothing can be compiled for the CPU</source>
        <translation>此 TVM 构建不含 LLVM：无法为 CPU 编译任何内容</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>install the apache-tvm wheel from PyPI (built with LLVM)</source>
        <translation>从 PyPI 安装 apache-tvm wheel（带 LLVM 构建）</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>compiled models run on {0} of the {1} usable cores ({2}): latency figures will be slower than the machine can do</source>
        <translation>编译后的模型只在 {1} 个可用核心中的 {0} 个上运行（{2}）：测得的延迟会比本机能达到的更慢</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>unset {0} (the app then uses every usable core)</source>
        <translation>取消设置 {0}（之后应用会使用所有可用核心）</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>pattern tables without their codegen (relax.ext.&lt;name&gt;) in this TVM build: {0}; FuseOpsByPattern with annotate_codegen=true and RunCodegen will fail for them</source>
        <translation>此 TVM 构建中缺少对应代码生成器（relax.ext.&lt;name&gt;）的模式表：{0}；对它们使用 annotate_codegen=true 的 FuseOpsByPattern 和 RunCodegen 会失败</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>keep annotate_codegen off for these tables (fusion into composite functions still works), or use a TVM built with that library&apos;s support</source>
        <translation>对这些模式表保持 annotate_codegen 关闭（融合为复合函数仍然可用），或使用带该库支持构建的 TVM</translation>
    </message>
    <message>
        <location line="+42"/>
        <location line="+7"/>
        <source>== Problems ==</source>
        <translation>== 问题 ==</translation>
    </message>
    <message>
        <location line="-3"/>
        <source>fix:</source>
        <translation>修复：</translation>
    </message>
    <message>
        <location line="+3"/>
        <location line="+39"/>
        <source>none found</source>
        <translation>未发现</translation>
    </message>
    <message>
        <location line="-37"/>
        <source>== System ==</source>
        <translation>== 系统 ==</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>, {0} usable</source>
        <translation>，{0} 个可用</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>{0} logical cores</source>
        <translation>{0} 个逻辑核心</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Memory</source>
        <translation>内存</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>== TVM (engine process) ==</source>
        <translation>== TVM（引擎进程）==</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>unavailable:</source>
        <translation>不可用：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>the engine did not answer</source>
        <translation>引擎没有响应</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>CPU threads {0} ({1}) for compiled code</source>
        <translation>编译代码使用 {0} 个 CPU 线程（{1}）</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>build flags</source>
        <translation>构建选项</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>== Devices ==</source>
        <translation>== 设备 ==</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>== Codegens (relax.ext.*) ==</source>
        <translation>== 代码生成器（relax.ext.*）==</translation>
    </message>
    <message>
        <location line="+2"/>
        <location line="+43"/>
        <source>yes</source>
        <translation>是</translation>
    </message>
    <message>
        <location line="-43"/>
        <location line="+43"/>
        <source>no</source>
        <translation>否</translation>
    </message>
    <message>
        <location line="-41"/>
        <location line="+7"/>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <location line="-5"/>
        <source>== Pattern tables ==</source>
        <translation>== 模式表 ==</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>codegen available</source>
        <translation>代码生成器可用</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>no codegen</source>
        <translation>无代码生成器</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>{0} patterns</source>
        <translation>{0} 个模式</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>== Python packages ==</source>
        <translation>== Python 包 ==</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>not installed</source>
        <translation>未安装</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>thread pool: the app&apos;s (idle workers spin {0} µs, then sleep; the caller runs the parts no worker took)</source>
        <translation>线程池：应用自带（空闲工作线程先自旋 {0} µs 再休眠；无工作线程领取的部分由调用线程执行）</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>; the app&apos;s pool is not in use: {0}</source>
        <translation>；未使用应用自带的线程池：{0}</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>sleep</source>
        <translation>休眠</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>spin {0} turns first</source>
        <translation>先自旋 {0} 次</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>thread pool: idle workers {0} ({1}={2}); pinned to cores: {3} ({4}={5})</source>
        <translation>线程池：空闲工作线程{0}（{1}={2}）；绑定到核心：{3}（{4}={5}）</translation>
    </message>
    <message>
        <location line="+1"/>
        <location line="+1"/>
        <source>unset</source>
        <translation>未设置</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>== Plug-ins (entry points) ==</source>
        <translation>== 插件（入口点） ==</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>NOT LOADED: {0}</source>
        <translation>未加载：{0}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>none installed</source>
        <translation>未安装</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>== Tuning database (per user, reused across pipelines and models) ==</source>
        <translation>== 调优数据库（按用户，在流水线和模型之间复用）==</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>off (RPS_TUNING_DB_DIR=off)</source>
        <translation>已关闭（RPS_TUNING_DB_DIR=off）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>{0} (not created yet: nothing tuned with it)</source>
        <translation>{0}（尚未创建：还没有用它调优过）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>{records} records of {workloads} workloads, {size} KiB</source>
        <translation>{workloads} 个工作负载的 {records} 条记录，{size} KiB</translation>
    </message>
</context>
<context>
    <name>ExportScript</name>
    <message>
        <location filename="../../widgets/export_texts.py" line="+20"/>
        <source>unknown pattern table {0}</source>
        <extracomment>What one step&apos;s export said (after ``step N (pass id): ``).</extracomment>
        <translation>未知的模式表 {0}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>no pattern table given (table_prefix is empty; its default comes from the engine&apos;s catalogue)</source>
        <translation>未指定模式表（table_prefix 为空；其默认值来自引擎的目录）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>no construction known for pass {0}</source>
        <translation>不知道如何构造 Pass {0}</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>unknown pass</source>
        <translation>未知的 Pass</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>not available: {0}</source>
        <translation>不可用：{0}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>pass id has characters other than letters, digits, &apos;_&apos; and &apos;.&apos;</source>
        <translation>Pass 标识中含有字母、数字、“_”和“.”以外的字符</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>bad function name {0}</source>
        <translation>函数名 {0} 无效</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>bad pipeline name {0}</source>
        <translation>流水线名 {0} 无效</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>bad pass name {0}</source>
        <translation>Pass 名 {0} 无效</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>unknown backend stage {0}</source>
        <translation>未知的后端阶段 {0}</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>syntax error at line {0}: {1}</source>
        <translation>第 {0} 行有语法错误：{1}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>schedule_fn: syntax error at line {0}: {1}</source>
        <translation>schedule_fn：第 {0} 行有语法错误：{1}</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>unknown DLight rule {0}</source>
        <translation>未知的 DLight 规则 {0}</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>DLight rule {0} is not in {1}</source>
        <translation>DLight 规则 {0} 不在 {1} 中</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>DLight rule {0} is not installed (no installed plug-in provides DLight rules of group {1}; Help ▸ Environment lists the plug-ins)</source>
        <translation>DLight 规则 {0} 未安装（没有已安装的插件提供 {1} 组的 DLight 规则；“帮助 ▸ 环境”列出了插件）</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>step {0} ({1}): {2}</source>
        <extracomment>The whole refusal.</extracomment>
        <translation>步骤 {0}（{1}）：{2}</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>model {0}: {1}</source>
        <translation>模型 {0}：{1}</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>pipeline target: {0}</source>
        <translation>流水线目标：{0}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>the exported script does not compile (line {0}: {1})</source>
        <translation>导出的脚本无法编译（第 {0} 行：{1}）</translation>
    </message>
    <message>
        <location line="+30"/>
        <source>Exporting {0} failed:</source>
        <translation>导出 {0} 失败：</translation>
    </message>
</context>
<context>
    <name>GraphNode</name>
    <message>
        <location filename="../../widgets/graph/node_texts.py" line="+15"/>
        <source>binding</source>
        <extracomment>A node&apos;s ``kind`` (``pipeline_model.ir_graph``, ``graph_hierarchy``), translated where shown.</extracomment>
        <translation>绑定</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>parameter</source>
        <translation>参数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>constant</source>
        <translation>常量</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>output</source>
        <translation>输出</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>group</source>
        <translation>分组</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>module group</source>
        <translation>模块分组</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>call of a Relax function</source>
        <translation>Relax 函数调用</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>op: {0}</source>
        <extracomment>The fields of the tooltip and the details (``{0}``: the value, in a code font).</extracomment>
        <translation>算子：{0}</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>callee: {0}</source>
        <translation>被调函数：{0}</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>composite: {0}</source>
        <translation>复合函数：{0}</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>type: {0}</source>
        <translation>类型：{0}</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>output: {0}</source>
        <translation>输出：{0}</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>inputs:</source>
        <translation>输入：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>attributes:</source>
        <translation>属性：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>changed by the selected step</source>
        <translation>被所选步骤改变</translation>
    </message>
</context>
<context>
    <name>GraphView</name>
    <message>
        <location filename="../../widgets/graph_view.py" line="+137"/>
        <location line="+34"/>
        <source>No graph</source>
        <translation>无图</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Empty function</source>
        <translation>空函数</translation>
    </message>
    <message>
        <location line="+429"/>
        <source>Cannot lay out the graph: {message}</source>
        <translation>无法布局该图：{message}</translation>
    </message>
    <message>
        <location line="-320"/>
        <source>Profile: share of run time</source>
        <translation>性能分析：运行时间占比</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>changed by this step</source>
        <translation>本步骤修改的节点</translation>
    </message>
    <message>
        <location line="-7"/>
        <source>{0} op</source>
        <translation>{0} 个算子</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>{0} ops</source>
        <translation>{0} 个算子</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>{0} weight</source>
        <translation>{0} 个权重</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>{0} weights</source>
        <translation>{0} 个权重</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>in </source>
        <translation>输入</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>out</source>
        <translation>输出</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>+ {0} more</source>
        <translation>另有 {0} 个</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>+ {0} nodes</source>
        <translation>+ {0} 个节点</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>output</source>
        <translation>输出</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>const</source>
        <translation>常量</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>tensor</source>
        <translation>张量</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>tuple</source>
        <translation>元组</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Where values diverge</source>
        <translation>数值偏离位置</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>{0} diverge · {1} ok · {2} no counterpart</source>
        <translation>{0} 偏离 · {1} 正常 · {2} 无对应</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>ok</source>
        <translation>正常</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>tolerance {0}</source>
        <translation>容差 {0}</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>diverges</source>
        <translation>偏离</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>no counterpart (not compared)</source>
        <translation>无对应（未比较）</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>first diverging node</source>
        <translation>第一个偏离的节点</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>first</source>
        <translation>首个</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Clear the colouring (Esc)</source>
        <translation>清除着色（Esc）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>holds a diverging node</source>
        <translation>含有偏离的节点</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>DIVERGES</source>
        <translation>偏离</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>no counterpart</source>
        <translation>无对应</translation>
    </message>
    <message>
        <location line="+354"/>
        <source>dataflow block {0}</source>
        <translation>数据流块 {0}</translation>
    </message>
</context>
<context>
    <name>Labels</name>
    <message>
        <location filename="../../widgets/doc_text.py" line="+32"/>
        <source>{0}: {1}</source>
        <extracomment>Descriptions of the app&apos;s own passes and parameters, in the interface&apos;s language.</extracomment>
        <translation>{0}：{1}</translation>
    </message>
</context>
<context>
    <name>LatencyChart</name>
    <message>
        <location filename="../../widgets/latency_chart.py" line="+75"/>
        <source>Compare with the baseline to see latencies here</source>
        <translation>与基线比较后在此查看延迟</translation>
    </message>
</context>
<context>
    <name>LatencyStats</name>
    <message>
        <location filename="../../widgets/compare_view.py" line="-147"/>
        <source>no significant difference (±{pct} %)</source>
        <translation>无显著差异（±{pct} %）</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>not measured</source>
        <translation>未测量</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>same build (no difference to measure)</source>
        <translation>同一构建（没有可测量的差异）</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>{factor}× faster ({level} % CI {low}–{high}×)</source>
        <translation>快 {factor}×（{level} % 置信区间 {low}–{high}×）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>{factor}× slower ({level} % CI {low}–{high}×)</source>
        <translation>慢 {factor}×（{level} % 置信区间 {low}–{high}×）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>too few repeats to tell ({n} needed)</source>
        <translation>重复次数太少，无法判断（至少需要 {n} 次）</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>IQR {low} – {high}</source>
        <translation>四分位距 {low} – {high}</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <location filename="../../app/code_dialogs.py" line="+30"/>
        <source>Close</source>
        <translation>关闭</translation>
    </message>
</context>
<context>
    <name>ModelDialog</name>
    <message>
        <location filename="../../widgets/model_dialog.py" line="+36"/>
        <source>TVMScript .py — a class decorated with @I.ir_module (or the text of mod.script())</source>
        <translation>TVMScript .py — 用 @I.ir_module 装饰的类（或 mod.script() 的文本）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>nn.Module .py — defines `model` (tvm.relax.frontend.nn.Module) and `spec` (its export spec)</source>
        <translation>nn.Module .py — 定义 `model`（tvm.relax.frontend.nn.Module）和 `spec`（其导出规格）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>ONNX .onnx — imported with relax.frontend.onnx.from_onnx, weights kept</source>
        <translation>ONNX .onnx — 用 relax.frontend.onnx.from_onnx 导入，保留权重</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>PyTorch .pt2 (torch.export archive) or a torch .py with a torch.nn.Module and example inputs</source>
        <translation>PyTorch .pt2（torch.export 归档）或包含 torch.nn.Module 与示例输入的 torch .py 文件</translation>
    </message>
    <message>
        <location line="+18"/>
        <source>Open Model</source>
        <translation>打开模型</translation>
    </message>
    <message>
        <location line="+22"/>
        <source>a .py, .onnx or .pt2 file</source>
        <translation>.py、.onnx 或 .pt2 文件</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <location line="+23"/>
        <source>&lt;b&gt;Built-in models&lt;/b&gt;</source>
        <translation>&lt;b&gt;内置模型&lt;/b&gt;</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>&lt;b&gt;Or a model file&lt;/b&gt;</source>
        <translation>&lt;b&gt;或选择模型文件&lt;/b&gt;</translation>
    </message>
    <message>
        <location line="-19"/>
        <source>e.g. seq=8 batch=1 — pin symbolic dimensions of a dynamic model</source>
        <translation>例如 seq=8 batch=1 — 固定动态模型的符号维度</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Symbolic dimensions (a dynamic batch or sequence axis) fixed to a value when the model loads, as ONNX Runtime&apos;s free-dimension overrides do</source>
        <translation>加载模型时把符号维度（动态的批量或序列轴）固定为某个值，如同 ONNX Runtime 的自由维度覆盖</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Pinned dimensions:</source>
        <translation>固定维度：</translation>
    </message>
    <message>
        <location line="+47"/>
        <source>Pinned dimensions: &apos;{item}&apos; is not NAME=DIM (e.g. seq=8; DIM a positive integer)</source>
        <translation>固定维度：“{item}”不是 NAME=DIM 形式（例如 seq=8；DIM 为正整数）</translation>
    </message>
    <message>
        <location line="-21"/>
        <source>Open model file</source>
        <translation>打开模型文件</translation>
    </message>
    <message>
        <source>Models (*.py *.onnx *.pt2);;TVMScript / nn.Module / torch (*.py);;ONNX (*.onnx);;torch.export (*.pt2);;All files (*)</source>
        <translation type="vanished">模型 (*.py *.onnx *.pt2);;TVMScript / nn.Module / torch (*.py);;ONNX (*.onnx);;torch.export (*.pt2);;所有文件 (*)</translation>
    </message>
</context>
<context>
    <name>OutputPath</name>
    <message>
        <location filename="../../widgets/path_texts.py" line="+17"/>
        <source>script</source>
        <extracomment>What the app writes (``what`` of ``safe_write``), translated.</extracomment>
        <translation>脚本</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>export folder</source>
        <translation>导出文件夹</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>reproducer folder</source>
        <translation>复现包文件夹</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>output file</source>
        <translation>输出文件</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>output folder</source>
        <translation>输出文件夹</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>reproducer file</source>
        <translation>复现包文件</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>a symbolic link</source>
        <extracomment>What a path is (``pipeline_model.safe_files.kind_of``), translated.</extracomment>
        <translation>一个符号链接</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>a FIFO (named pipe)</source>
        <translation>一个 FIFO（命名管道）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>a character device</source>
        <translation>一个字符设备</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>a block device</source>
        <translation>一个块设备</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>a socket</source>
        <translation>一个套接字</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>a directory</source>
        <translation>一个文件夹</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>a regular file</source>
        <translation>一个普通文件</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>{0} {1}: is {2}; name a regular file</source>
        <translation>{0} {1}：是{2}；请指定一个普通文件</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>{0} {1}: is {2}; name a folder</source>
        <translation>{0} {1}：是{2}；请指定一个文件夹</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>{0} {1}: names a folder, not a file</source>
        <translation>{0} {1}：指向文件夹而不是文件</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>{0} {1}: nothing is written under {2}</source>
        <translation>{0} {1}：不会向 {2} 之下写入任何内容</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>{0} {1}: the folder {2} does not exist</source>
        <translation>{0} {1}：文件夹 {2} 不存在</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>{0} {1}: the folder {2} is not a folder</source>
        <translation>{0} {1}：{2} 不是文件夹</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>{0} {1}: already exists and would be replaced; name a new file or allow overwriting</source>
        <translation>{0} {1}：已存在，会被替换；请指定新文件，或允许覆盖</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>{0} {1}: {2} already exists and would be replaced; choose a new folder or allow overwriting</source>
        <translation>{0} {1}：{2} 已存在，会被替换；请选择新文件夹，或允许覆盖</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>{0} {1}: not a file name</source>
        <translation>{0} {1}：不是文件名</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>{0} {1}: not a folder name</source>
        <translation>{0} {1}：不是文件夹名</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>{0} {1}: {2}</source>
        <translation>{0} {1}：{2}</translation>
    </message>
</context>
<context>
    <name>ParamEditor</name>
    <message>
        <location filename="../../widgets/param_editor.py" line="+574"/>
        <location line="+30"/>
        <source>No step selected.</source>
        <translation>未选择步骤。</translation>
    </message>
    <message>
        <location line="+19"/>
        <source>This pass has no parameters.</source>
        <translation>此 Pass 没有参数。</translation>
    </message>
    <message>
        <location line="+20"/>
        <source>Not settable here (TVM&apos;s default is used):</source>
        <translation>此处无法设置（使用 TVM 的默认值）：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>no reason given</source>
        <translation>未说明原因</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>needs a Python object ({0})</source>
        <translation>需要 Python 对象（{0}）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>needs a Python object</source>
        <translation>需要 Python 对象</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>{name} (kind {kind}, default {default})</source>
        <translation>{name}（类型 {kind}，默认值 {default}）</translation>
    </message>
</context>
<context>
    <name>PassCatalogue</name>
    <message>
        <location filename="../../app/pass_texts.py" line="+21"/>
        <source>Custom Python pass</source>
        <extracomment>Texts of the app&apos;s own pass specs (titles, descriptions, parameter docs), exactly as the specs have them.</extracomment>
        <translation>自定义 Python Pass</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>A pass written in Python: the source defines a tvm.transform.Pass, a class decorated with @tvm.transform.module_pass / @relax.transform.function_pass, or a function taking an IRModule and returning one (the last one defined is used). Runs only when custom code is trusted.</source>
        <translation>用 Python 编写的 Pass：源代码定义一个 tvm.transform.Pass、一个用 @tvm.transform.module_pass / @relax.transform.function_pass 装饰的类，或一个接收 IRModule 并返回 IRModule 的函数（使用最后定义的那个）。只有在信任自定义代码后才会运行。</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Python source of the pass.</source>
        <translation>Pass 的 Python 源代码。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Bind model weights as constants</source>
        <translation>将模型权重绑定为常量</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Binds the weights the model carries (ONNX initializers, PyTorch parameters and buffers) as constants into the functions that take them (relax.transform.BindParams with the model&apos;s own values); they leave the signature, so the built module takes only the inputs. Put it first and follow it with FoldBatchnormToConv2D and FoldConstant to fold batch norm and other weight-only work into the weights at compile time. Models without weights of their own (built-in, TVMScript) have nothing to bind.</source>
        <translation>把模型自带的权重（ONNX 初始值、PyTorch 参数和缓冲区）作为常量绑定进使用它们的函数（`relax.transform.BindParams`，使用模型自己的值）；这些权重离开函数签名，构建出的模块只接收输入。请把它放在最前面，其后接 FoldBatchnormToConv2D 和 FoldConstant，在编译时把批归一化等只依赖权重的计算折叠进权重。没有自带权重的模型（内置模型、TVMScript）没有可绑定的权重。</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Sink reshapes below elementwise ops (the app&apos;s)</source>
        <translation>将 reshape 下沉到逐元素运算之后（本应用）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Small powers as products, divisions by constants as multiplications (the app&apos;s)</source>
        <translation>小幂次写成乘积、除以常数写成乘法（本应用）</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>Rewrites power(x, 2), power(x, 3) and power(x, 4) of float tensors into products of x (TVM compiles a power into one libm powf call per element, which does not vectorize; GPT-2&apos;s GELU computes pow(x, 3)), and x / c for a float constant c into x * (1 / c) (a vector division takes about ten times a multiplication; MobileNetV3&apos;s Hardswish divides by 6): the product may differ from the quotient in the last bit. The app&apos;s own step: exported scripts contain its code.</source>
        <translation>对浮点张量，把 `power(x, 2)`、`power(x, 3)` 和 `power(x, 4)` 改写为 `x` 的乘积（TVM 会把幂运算编译成每个元素一次 `libm` 的 `powf` 调用，无法向量化；GPT-2 的 GELU 会计算 `pow(x, 3)`），并把除以浮点常数 `c` 的 `x / c` 改写为 `x * (1 / c)`（向量除法的耗时约为乘法的十倍；MobileNetV3 的 HardSwish 会除以 6）：乘积与商可能在最后一位上不同。这是本应用自己的步骤：导出的脚本包含它的代码。</translation>
    </message>
    <message>
        <source>Sigmoid and SiLU through exp (the app&apos;s)</source>
        <translation type="vanished">用 exp 表示 Sigmoid 和 SiLU（本应用）</translation>
    </message>
    <message>
        <location line="-18"/>
        <source>Sigmoid, SiLU and GELU through exp, erf and tanh (the app&apos;s)</source>
        <translation>用 exp、erf 和 tanh 表示 Sigmoid、SiLU 和 GELU（本应用）</translation>
    </message>
    <message>
        <source>Small powers as products (the app&apos;s)</source>
        <translation type="vanished">小整数次幂改写为乘积（本应用）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Convolutions channels-last, layout carried between them (the app&apos;s)</source>
        <translation>卷积改为通道在后（NHWC），布局在卷积之间保持（本应用）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Fold constants in one build (the app&apos;s)</source>
        <translation>一次构建折叠常量（本应用）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Fold batch norms into convolutions (the app&apos;s)</source>
        <translation>将批归一化折叠进卷积（本应用）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Integer kernels for quantized ops (the app&apos;s)</source>
        <translation>量化算子的整数内核（本应用的）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Rewrites conv2d/matmul of dequantized uint8 activations and int8 weights (QDQ models) and MatMulInteger (dynamically quantized models) into a uint8 x int8 -&gt; int32 product (qdot) over packed weights, with the zero-point correction and the rescaling as its fused epilogue; app.CPUInt8 schedules it with VNNI (vpdpbusd); without AVX-512 VNNI in the target it changes nothing. Other dtypes, symbolic shapes and weight zero points that are not a constant zero are left as they are. Put it before LegalizeOps. The app&apos;s own step: exported scripts contain its code.</source>
        <translation>将反量化的 uint8 激活与 int8 权重上的 conv2d/matmul（QDQ 模型）以及 MatMulInteger（动态量化模型）改写为在打包权重上的 uint8 x int8 -&gt; int32 乘积（qdot），零点校正与重新缩放作为其融合的尾部运算；app.CPUInt8 用 VNNI（vpdpbusd）调度它；目标没有 AVX-512 VNNI 时不做任何改动。其他数据类型、符号形状以及不是常量零的权重零点保持不变。放在 LegalizeOps 之前。本应用自己的步骤：导出的脚本包含其代码。</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Rewrites op(reshape(x)) into reshape(op(x)) for elementwise ops (bias and residual adds, GELU, activations) when the reshape only adds dimensions, then folds the reshape pairs this leaves (RemoveRedundantReshape). A matmul viewed back to [batch, seq, n] before its activation (GPT-2&apos;s Conv1D) then fuses with its epilogue in FuseOps. Put it before LegalizeOps. The app&apos;s own step: exported scripts contain its code.</source>
        <translation>当 `reshape` 只增加维度时，把逐元素运算（偏置和残差加法、GELU、激活函数）的 `op(reshape(x))` 改写为 `reshape(op(x))`，再折叠由此留下的成对 `reshape`（RemoveRedundantReshape）。这样在激活之前被视图回 `[batch, seq, n]` 的矩阵乘（GPT-2 的 Conv1D）就能在 FuseOps 中与其尾部运算融合。请放在 LegalizeOps 之前。这是本应用自己的步骤：导出的脚本包含它的代码。</translation>
    </message>
    <message>
        <source>Rewrites power(x, 2), power(x, 3) and power(x, 4) of float tensors into products of x (TVM compiles a power into one libm powf call per element, which does not vectorize; GPT-2&apos;s GELU computes pow(x, 3)). The app&apos;s own step: exported scripts contain its code.</source>
        <translation type="vanished">对浮点张量，把 `power(x, 2)`、`power(x, 3)` 和 `power(x, 4)` 改写为 `x` 的乘积（TVM 会把幂运算编译成每个元素一次 `libm` 的 `powf` 调用，无法向量化；GPT-2 的 GELU 会计算 `pow(x, 3)`）。这是本应用自己的步骤：导出的脚本包含它的代码。</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Converts every float 2-D convolution to NHWC data and OHWI weights, when the app&apos;s NHWC schedule takes each of them (float32, regular or depthwise), and carries that layout through the operations between convolutions (relax.ConvertLayout, with clip first written as maximum and minimum so Hardswish and ReLU6 carry it too): the channels, the axis a CPU convolution vectorizes over, are contiguous, and transposes remain only where the network enters and leaves the layout. Put it after app.FoldBatchNorm and before FastMathTransform (whose exp is a TIR call the layout cannot pass) and LegalizeOps. The app&apos;s own step: exported scripts contain its code.</source>
        <translation>当本应用的 NHWC 调度能处理其中每一个卷积（float32、普通卷积或深度卷积）时，把每个浮点二维卷积转换为 NHWC 数据和 OHWI 权重，并让这一布局贯穿卷积之间的运算（relax.ConvertLayout；先把 relax.clip 写成 R.maximum 与 R.minimum，使 HardSwish 和 ReLU6 也能保持该布局）：CPU 卷积向量化所沿的通道轴是连续的，只在网络进入和离开该布局的地方留下转置。放在 app.FoldBatchNorm 之后、FastMathTransform（其 exp 是布局无法穿过的 TIR 调用）和 LegalizeOps 之前。本应用自己的步骤：导出的脚本包含其代码。</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>3 x 3 convolutions by Winograd&apos;s minimal filtering (the app&apos;s)</source>
        <translation>3 x 3 卷积改用 Winograd 最小滤波算法（本应用）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Computes every 3 x 3, stride-1, padding-1 float32 NHWC convolution of batch 1 with even maps of at least 32 output tiles of 2 x 2 with Winograd&apos;s minimal filtering: F(4 x 4, 3 x 3) where the sides are multiples of 4 with at least 32 tiles of 4 x 4 (36 multiply-adds per 4 x 4 outputs instead of 144), else F(2 x 2, 3 x 3) (16 per 2 x 2 instead of 36); the weights transformed once, each input and output tile transformed with sums. ResNet-18&apos;s 3 x 3 layers 1.5-2.5x faster. Results differ from the direct convolution&apos;s by rounding (about 1e-6 relative). The bias, residual add and activation still fuse into it; app.CPUConv2d schedules it. Put it after app.ChannelsLast and before LegalizeOps. The app&apos;s own step: exported scripts contain its code.</source>
        <translation>用 Winograd 最小滤波算法计算每个批大小为 1、特征图高和宽为偶数且至少有 32 个 2 x 2 输出块的 3 x 3、步长 1、填充 1 的 float32 NHWC 卷积：高和宽为 4 的倍数且至少有 32 个 4 x 4 输出块时每块输出 4 x 4（每 4 x 4 个输出 36 次乘加，而不是 144 次），否则每块输出 2 x 2（每 2 x 2 个输出 16 次，而不是 36 次）；权重只变换一次，每个输入块和输出块用求和变换。ResNet-18 的 3 x 3 层快 1.5-2.5 倍。结果与直接卷积只差舍入误差（相对误差约 1e-6）。偏置、残差相加和激活仍融合进它；由 app.CPUConv2d 调度。放在 app.ChannelsLast 之后、LegalizeOps 之前。本应用自己的步骤：导出的脚本包含其代码。</translation>
    </message>
    <message>
        <source>3 x 3 convolutions as Winograd F(2 x 2, 3 x 3) (the app&apos;s)</source>
        <translation type="vanished">3 x 3 卷积改用 Winograd 算法，每块输出 2 x 2（本应用）</translation>
    </message>
    <message>
        <source>Computes every 3 x 3, stride-1, padding-1 float32 NHWC convolution of batch 1 with even maps of at least 32 output tiles with Winograd&apos;s minimal filtering F(2 x 2, 3 x 3): the weights transformed once, each 4 x 4 input tile and 2 x 2 output tile transformed with additions, 16 matrix products over the channels instead of 36 multiply-adds per 2 x 2 outputs (ResNet-18&apos;s 3 x 3 layers 1.5-1.7x faster). Results differ from the direct convolution&apos;s by rounding (about 1e-6 relative). The bias, residual add and activation still fuse into it; app.CPUConv2d schedules it. Put it after app.ChannelsLast and before LegalizeOps. The app&apos;s own step: exported scripts contain its code.</source>
        <translation type="vanished">用 Winograd 最小滤波算法（每块输出 2 x 2，卷积核 3 x 3）计算每个批大小为 1、特征图高和宽为偶数且至少有 32 个输出块的 3 x 3、步长 1、填充 1 的 float32 NHWC 卷积：权重只变换一次，每个 4 x 4 输入块和 2 x 2 输出块只用加减法变换，每 2 x 2 个输出用沿通道的 16 个矩阵乘积代替 36 次乘加（ResNet-18 的 3 x 3 层快 1.5-1.7 倍）。结果与直接卷积只差舍入误差（相对误差约 1e-6）。偏置、残差相加和激活仍融合进它；由 app.CPUConv2d 调度。放在 app.ChannelsLast 之后、LegalizeOps 之前。本应用自己的步骤：导出的脚本包含其代码。</translation>
    </message>
    <message>
        <source>Converts every float 2-D convolution to NHWC data and OHWI weights and carries that layout through the operations between convolutions (relax.ConvertLayout, with clip first written as maximum and minimum so Hardswish and ReLU6 carry it too): the channels, the axis a CPU convolution vectorizes over, are contiguous, and transposes remain only where the network enters and leaves the layout. Put it after app.FoldBatchNorm and before FastMathTransform (whose exp is a TIR call the layout cannot pass) and LegalizeOps. The app&apos;s own step: exported scripts contain its code.</source>
        <translation type="vanished">把每个浮点二维卷积转换为 NHWC 数据和 OHWI 权重，并让这一布局贯穿卷积之间的运算（relax.ConvertLayout；先把 relax.clip 写成 R.maximum 与 R.minimum，使 HardSwish 和 ReLU6 也能保持该布局）：CPU 卷积向量化所沿的通道轴是连续的，只在网络进入和离开该布局的地方留下转置。放在 app.FoldBatchNorm 之后、FastMathTransform（其 exp 是布局无法穿过的 TIR 调用）和 LegalizeOps 之前。本应用自己的步骤：导出的脚本包含其代码。</translation>
    </message>
    <message>
        <source>Converts every float 2-D convolution to NHWC data and OHWI weights and carries that layout through the operations between convolutions (relax.ConvertLayout, with clip first written as maximum and minimum so Hardswish and ReLU6 carry it too): the channels, the axis a CPU convolution vectorizes over, are contiguous, and transposes remain only where the network enters and leaves the layout. Put it after app.FoldBatchNorm and before LegalizeOps. The app&apos;s own step: exported scripts contain its code.</source>
        <translation type="vanished">把每个浮点二维卷积转换为 NHWC 数据和 OHWI 权重，并让这一布局贯穿卷积之间的运算（relax.ConvertLayout；先把 relax.clip 写成 R.maximum 与 R.minimum，使 HardSwish 和 ReLU6 也能保持该布局）：CPU 卷积向量化所沿的通道轴是连续的，只在网络进入和离开该布局的地方留下转置。放在 app.FoldBatchNorm 之后、LegalizeOps 之前。本应用自己的步骤：导出的脚本包含其代码。</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Rewrites sigmoid(x) into 1 / (1 + exp(-x)), silu(x) into x / (1 + exp(-x)) and the two GELUs into their erf and tanh forms for float tensors, so a FastMathTransform after it replaces the exp, erf and tanh by TVM&apos;s vectorizable polynomials (TVM compiles sigmoid and GELU into one libm call per element). Put it before FastMathTransform. The app&apos;s own step: exported scripts contain its code.</source>
        <translation>对浮点张量，把 `sigmoid(x)` 改写为 `1 / (1 + exp(-x))`，把 `silu(x)` 改写为 `x / (1 + exp(-x))`，把两种 GELU 改写为它们的 `erf` 和 `tanh` 形式，这样其后的 FastMathTransform 会把 `exp`、`erf` 和 `tanh` 换成 TVM 可向量化的多项式（TVM 会把 `sigmoid` 和 GELU 编译成每个元素一次 `libm` 调用）。请放在 FastMathTransform 之前。这是本应用自己的步骤：导出的脚本包含它的代码。</translation>
    </message>
    <message>
        <source>Rewrites sigmoid(x) into 1 / (1 + exp(-x)) and silu(x) into x / (1 + exp(-x)) for float tensors, so a FastMathTransform after it replaces the exp by TVM&apos;s vectorizable fast_exp (TVM compiles sigmoid into one libm expf call per element). Put it before FastMathTransform. The app&apos;s own step: exported scripts contain its code.</source>
        <translation type="vanished">对浮点张量，把 `sigmoid(x)` 改写为 `1 / (1 + exp(-x))`，把 `silu(x)` 改写为 `x / (1 + exp(-x))`，这样其后的 FastMathTransform 会把 `exp` 换成 TVM 可向量化的 fast_exp（TVM 会把 `sigmoid` 编译成每个元素一次 `libm` 的 `expf` 调用）。请放在 FastMathTransform 之前。这是本应用自己的步骤：导出的脚本包含它的代码。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>The module relax.FoldConstant gives, faster: the R.call_tir calls on constants (shape computations of imported models, rotary tables) are computed together by one function built and run once on the CPU, instead of one build per call; then FoldConstant propagates the constants and folds what is left. Falls back to plain FoldConstant when that build fails. The app&apos;s own step: exported scripts contain its code.</source>
        <translation>得到与 relax.FoldConstant 相同的模块，但更快：作用在常量上的 R.call_tir 调用（导入模型的形状计算、旋转位置编码表）由一个在 CPU 上构建并运行一次的函数一起计算，而不是每个调用构建一次；然后 FoldConstant 传播这些常量并折叠剩下的部分。该构建失败时退回到普通的 FoldConstant。这是本应用自己的步骤：导出的脚本包含它的代码。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Rewrites an inference batch norm of a conv2d (NCHW, OIHW) into conv2d(x, w * scale) + shift, and any other inference batch norm into x * scale + shift, with scale = gamma / sqrt(var + eps) and shift = beta - mean * scale computed on the channel vectors (weight-only work that LiftTransformParams runs once, FoldConstant folds for bound weights) instead of a square root and a division per element. Works on weights that are parameters (TVM&apos;s FoldBatchnormToConv2D needs constants). Put it before DecomposeOpsForInference. The app&apos;s own step: exported scripts contain its code.</source>
        <translation>把卷积 conv2d（NCHW、OIHW）之后的推理批归一化改写为 `conv2d(x, w * scale) + shift`，把其他推理批归一化改写为 `x * scale + shift`，其中 `scale = gamma / sqrt(var + eps)`、`shift = beta - mean * scale` 在通道向量上计算（仅依赖权重的计算：LiftTransformParams 只运行一次，绑定的权重由 FoldConstant 折叠），而不是对每个元素做一次开方和一次除法。对作为参数的权重同样有效（TVM 的 FoldBatchnormToConv2D 需要常量）。请放在 DecomposeOpsForInference 之前。这是本应用自己的步骤：导出的脚本包含它的代码。</translation>
    </message>
    <message>
        <location filename="../../widgets/pass_notes.py" line="+16"/>
        <source>Unknown pass {0}: misspelt, or from another TVM build</source>
        <extracomment>A step whose pass no catalogue knows (``PipelineEditor.refresh_placeholders``: ``unknown pass &apos;id&apos;: reason`` with the reason of ``pipeline_model.passkinds.registry.unknown_pass_reason``), as message ids.</extracomment>
        <translation>未知的 Pass {0}：拼写有误，或来自另一个 TVM 构建</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Unknown pass {0}: misspelt, or not offered by the installed plug-in {1}</source>
        <translation>未知的 Pass {0}：拼写有误，或已安装的插件 {1} 不提供它</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Unknown pass {0}: no installed plug-in provides it: the plug-in of the {1} passes is not installed ({2} lists the plug-ins)</source>
        <translation>未知的 Pass {0}：没有已安装的插件提供它：{1} 这组 Pass 的插件未安装（{2} 会列出插件）</translation>
    </message>
</context>
<context>
    <name>PassCategory</name>
    <message>
        <location filename="../../widgets/pass_palette.py" line="+33"/>
        <source>Lowering</source>
        <extracomment>The catalogue&apos;s category names (``pipeline_model.catalogue.CATEGORY_ORDER``), marked for translation; shown through :func:`category_label` (an unknown category is shown as it is).</extracomment>
        <translation>降级</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Fusion</source>
        <translation>融合</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Scheduling (DLight)</source>
        <translation>调度（DLight）</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Tuning (MetaSchedule)</source>
        <translation>调优（MetaSchedule）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Named pipelines</source>
        <translation>命名流水线</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Backend stages</source>
        <translation>后端阶段</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Optimization</source>
        <translation>优化</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Layout &amp; precision</source>
        <translation>布局与精度</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Memory &amp; runtime</source>
        <translation>内存与运行时</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Analysis &amp; utility</source>
        <translation>分析与工具</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Custom</source>
        <translation>自定义</translation>
    </message>
</context>
<context>
    <name>PassContextDialog</name>
    <message>
        <location filename="../../app/pass_context_controller.py" line="+29"/>
        <source>Pipeline PassContext</source>
        <translation>流水线 PassContext</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Every step runs inside {0}. The settings are saved in the pipeline file and written into exported scripts; changing them re-runs the pipeline.</source>
        <translation>每个步骤都在 {0} 中运行。这些设置保存在流水线文件中，并写入导出的脚本；修改它们会重新运行流水线。</translation>
    </message>
    <message>
        <source>Every step runs inside tvm.transform.PassContext(opt_level, config, disabled_pass). The settings are saved in the pipeline file and written into exported scripts; changing them re-runs the pipeline.</source>
        <translation type="vanished">每个步骤都在 tvm.transform.PassContext(opt_level, config, disabled_pass) 中运行。这些设置保存在流水线文件中，并写入导出的脚本；修改它们会重新运行流水线。</translation>
    </message>
</context>
<context>
    <name>PassContextEditor</name>
    <message>
        <location filename="../../widgets/pass_context_editor.py" line="+49"/>
        <source>tvm.transform.PassContext(opt_level=...): passes above it are skipped</source>
        <translation>tvm.transform.PassContext(opt_level=...)：高于该级别的 pass 会被跳过</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>config key, e.g. relax.FuseOps.max_depth</source>
        <translation>配置键，例如 relax.FuseOps.max_depth</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>value (JSON: 1, true, &quot;text&quot;)</source>
        <translation>值（JSON：1、true/false、&quot;文本&quot;）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Set</source>
        <translation>设置</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Remove</source>
        <translation>移除</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Config key</source>
        <translation>配置键</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Value</source>
        <translation>值</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>pass name, e.g. FoldConstant</source>
        <translation>pass 名称，例如 FoldConstant</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Disable</source>
        <translation>禁用</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Enable again</source>
        <translation>重新启用</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Opt level</source>
        <translation>优化级别</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Config entries</source>
        <translation>配置项</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Disabled passes</source>
        <translation>禁用的 pass</translation>
    </message>
    <message>
        <location line="+69"/>
        <source>Enter a config key.</source>
        <translation>请输入配置键。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>{0}: the value is not JSON (numbers, true/false, &quot;text&quot;)</source>
        <translation>{0}：该值不是 JSON（数字、true/false、&quot;text&quot;）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>{0}: the value must not be null</source>
        <translation>{0}：该值不能为 null</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>{0} is not a config key this TVM knows; the run will refuse it</source>
        <translation>{0} 不是此 TVM 已知的配置键；运行时会被拒绝</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>{0} takes true or false</source>
        <translation>{0} 只接受 true 或 false</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>{0} takes an integer</source>
        <translation>{0} 只接受整数</translation>
    </message>
</context>
<context>
    <name>PassPalette</name>
    <message>
        <location filename="../../widgets/pass_palette.py" line="+167"/>
        <source>Search passes (id, title, doc)…</source>
        <translation>搜索 Pass（ID、标题、文档）…</translation>
    </message>
    <message>
        <location line="+21"/>
        <source>Select or hover a pass to read its documentation. Drag it into the pipeline.</source>
        <translation>选中或悬停在 Pass 上以阅读其文档。将其拖入流水线即可添加。</translation>
    </message>
    <message>
        <location line="+68"/>
        <source>&lt;p&gt;&lt;code&gt;{id}&lt;/code&gt; is not in the catalogue.&lt;/p&gt;</source>
        <translation>&lt;p&gt;&lt;code&gt;{id}&lt;/code&gt; 不在目录中。&lt;/p&gt;</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>&lt;p&gt;&lt;b&gt;Unavailable:&lt;/b&gt; {reason}&lt;/p&gt;</source>
        <translation>&lt;p&gt;&lt;b&gt;不可用：&lt;/b&gt;{reason}&lt;/p&gt;</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>not in this TVM build</source>
        <translation>当前 TVM 构建中没有</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>&lt;p&gt;&lt;i&gt;Runs your own Python code: the app asks before running it.&lt;/i&gt;&lt;/p&gt;</source>
        <translation>&lt;p&gt;&lt;i&gt;运行您自己的 Python 代码：运行前应用会先征求您的同意。&lt;/i&gt;&lt;/p&gt;</translation>
    </message>
    <message>
        <location line="+22"/>
        <source>&lt;p&gt;&lt;b&gt;Parameters&lt;/b&gt;&lt;/p&gt;</source>
        <translation>&lt;p&gt;&lt;b&gt;参数&lt;/b&gt;&lt;/p&gt;</translation>
    </message>
    <message>
        <location line="-10"/>
        <source>&lt;p&gt;&lt;b&gt;Bundled custom passes&lt;/b&gt; (files in the app&apos;s resources/custom_passes folder: paste one into a Custom Python step):&lt;/p&gt;</source>
        <translation>&lt;p&gt;&lt;b&gt;内置自定义 Pass&lt;/b&gt;（应用 resources/custom_passes 文件夹中的文件：可粘贴到自定义 Python 步骤中）：&lt;/p&gt;</translation>
    </message>
</context>
<context>
    <name>PipelineView</name>
    <message>
        <location filename="../../widgets/pipeline_view.py" line="+171"/>
        <source>Hide unchanged steps</source>
        <translation>隐藏未改变的步骤</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Hide the steps that did not change the module</source>
        <translation>隐藏未改变模块的步骤</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Duplicate</source>
        <translation>复制</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Delete</source>
        <translation>删除</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Drag passes here from the Passes panel
(or double-click a pass there).</source>
        <translation>从“Pass 列表”面板将 Pass 拖到这里
（或在那里双击某个 Pass）。</translation>
    </message>
    <message>
        <location line="+189"/>
        <source>Nested pass</source>
        <translation>嵌套 Pass</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Time</source>
        <translation>时间</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Changed</source>
        <translation>有改变</translation>
    </message>
    <message>
        <location line="-73"/>
        <source>yes</source>
        <extracomment>Rows of the nested-pass table that are always visible (plus its header). Steps the list always shows (the nested-pass table open or not).</extracomment>
        <translation>是</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>Nested passes: {ran} ran, {changed} changed the module</source>
        <translation>嵌套 Pass：运行 {ran} 个，其中 {changed} 个改变了模块</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Nested passes: run the step to see them</source>
        <translation>嵌套 Pass：运行该步骤后查看</translation>
    </message>
    <message>
        <location line="+27"/>
        <source>Run to this step</source>
        <translation>运行到此步骤</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Save Reproducer…</source>
        <translation>保存复现包…</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>A folder with a standalone repro.py of plain TVM calls that fails the same way</source>
        <translation>一个文件夹，内含仅用 TVM 调用、以相同方式失败的独立 repro.py</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Save and Reduce…</source>
        <translation>保存并精简…</translation>
    </message>
</context>
<context>
    <name>ProfileView</name>
    <message>
        <location filename="../../widgets/profile_view.py" line="+49"/>
        <source>PrimFunc</source>
        <translation>PrimFunc</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Relax function</source>
        <translation>Relax 函数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>VM built-in</source>
        <translation>VM 内置函数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>packed function</source>
        <translation>打包函数</translation>
    </message>
    <message>
        <location line="+243"/>
        <source>Compare with:</source>
        <extracomment>The user chose a profile to compare with (its key; ``&quot;&quot;``: no comparison).</extracomment>
        <translation>对比：</translation>
    </message>
    <message>
        <location line="+39"/>
        <source>No profile yet: build with profiling on to see where the time goes.</source>
        <translation>尚无性能剖析：开启剖析后构建，即可查看时间花在哪里。</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>%1 kernels, %2 per run, each timed by itself on the RPC device (the whole run there %3, median of %4 runs; the VM&apos;s work between the kernels is not in the rows)</source>
        <translation>%1 个内核，每次运行共 %2，每个内核在 RPC 设备上单独计时（在该设备上整次运行 %3，%4 次运行的中位数；内核之间 VM 自身的工作不在表中）</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Not timed on the device: %1</source>
        <translation>未在设备上计时：%1</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>%1 functions, %2 of calls per run (instrumented run %3, median of %4 runs)</source>
        <translation>%1 个函数，每次运行调用耗时 %2（插桩运行 %3，%4 次运行的中位数）</translation>
    </message>
    <message>
        <location line="+16"/>
        <source>(no comparison)</source>
        <translation>（不对比）</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Compare this profile, callee by callee, with the profile of another step</source>
        <translation>逐个被调函数，将此剖析与另一步骤的剖析对比</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>No other step has a profile: select another step, check Profile and Build &amp; Run it</source>
        <translation>没有其他步骤的剖析：选择另一个步骤，勾选“剖析”后构建并运行</translation>
    </message>
    <message>
        <location line="+74"/>
        <source>{before} → {after}: calls {t0} → {t1} per run ({ratio}, {delta}); run {r0} → {r1}; {both} functions in both, {added} added, {removed} removed</source>
        <translation>{before} → {after}：每次运行调用耗时 {t0} → {t1}（{ratio}，{delta}）；运行 {r0} → {r1}；两侧共有 {both} 个函数，新增 {added} 个，移除 {removed} 个</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>before</source>
        <translation>之前</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>after</source>
        <translation>之后</translation>
    </message>
    <message>
        <location line="-5"/>
        <source>Instrumented runs after against before: {verdict}.</source>
        <translation>插桩运行（之后对比之前）：{verdict}。</translation>
    </message>
</context>
<context>
    <name>QtEngineWorker</name>
    <message>
        <location filename="../../app/engine_worker.py" line="+231"/>
        <source>The engine process ended; starting a new one…</source>
        <extracomment>How often the idle engine&apos;s process is checked (ms): the status bar never says &quot;Engine ready&quot; of a dead one. The engine process was replaced (crash, Stop of a step that did not return, Restart Engine): modules of the old one are gone. The engine process ended while idle (killed, out of memory): a fresh one is starting and the modules of the old one are gone (the run session runs the pipeline again to make them). ``EngineClient`` keyword arguments (watchdog, memory limit), read when the client is made and by :meth:`apply_client_options`. Graph / text requests put off until the queued run has made their module (see ``_put_off``). What the user consented to: the consent of every client this worker makes (or is lent). The state last announced (``state_changed``), read in the GUI thread. The engine process is watched while idle: &quot;Engine ready&quot; is said only of a process that runs.</extracomment>
        <translation>引擎进程已结束；正在启动新的引擎…</translation>
    </message>
    <message>
        <location line="+223"/>
        <source>Starting engine…</source>
        <translation>正在启动引擎…</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Engine failed to start: {error}</source>
        <translation>引擎启动失败：{error}</translation>
    </message>
    <message>
        <location line="+22"/>
        <location line="+18"/>
        <source>Engine ready (TVM {version})</source>
        <translation>引擎就绪（TVM {version}）</translation>
    </message>
    <message>
        <location line="-17"/>
        <source>Engine ready</source>
        <translation>引擎就绪</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Engine stopped</source>
        <translation>引擎已停止</translation>
    </message>
    <message>
        <location line="+33"/>
        <source>Engine: {job}…</source>
        <translation>引擎：{job}…</translation>
    </message>
    <message>
        <location line="+28"/>
        <source>The engine crashed during a {0} request.</source>
        <translation>引擎在处理 {0} 请求时崩溃。</translation>
    </message>
    <message>
        <location line="+36"/>
        <source>Running pipeline…</source>
        <translation>正在运行流水线…</translation>
    </message>
    <message>
        <location line="+66"/>
        <source>Run superseded by an edit; engine restarted…</source>
        <translation>编辑取代了正在进行的运行；引擎已重启…</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>The engine crashed while running step {0} ({1}).</source>
        <translation>引擎在运行第 {0} 步（{1}）时崩溃。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>The engine crashed.</source>
        <translation>引擎崩溃。</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Engine crashed; restarted…</source>
        <translation>引擎崩溃；已重启…</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Engine restarted…</source>
        <translation>引擎已重启…</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Engine restart failed: {error}</source>
        <translation>引擎重启失败：{error}</translation>
    </message>
</context>
<context>
    <name>QtPassPaletteModel</name>
    <message>
        <location filename="../../widgets/pass_palette.py" line="-254"/>
        <location line="+13"/>
        <source>Pass</source>
        <translation>Pass</translation>
    </message>
    <message>
        <location line="+35"/>
        <source>not available in this TVM build</source>
        <translation>当前 TVM 构建中不可用</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>&lt;b&gt;{title}&lt;/b&gt; — unavailable: {reason}</source>
        <translation>&lt;b&gt;{title}&lt;/b&gt; — 不可用：{reason}</translation>
    </message>
</context>
<context>
    <name>QtPipelineModel</name>
    <message>
        <location filename="../../widgets/step_model.py" line="+60"/>
        <source>breaking step</source>
        <extracomment>MIME type of a pass dragged out of the palette: UTF-8 JSON ``{&quot;pass_id&quot;: ...}``. MIME type of steps dragged inside the pipeline list: UTF-8 JSON ``{&quot;uids&quot;: [...]}``. The item data roles, numbered from ``UserRole + 1`` in this order. ``BisectRole``: the step&apos;s mark from the last Find Breaking Step (``&quot;culprit&quot;``, ``&quot;pass&quot;``, ``&quot;fail&quot;``, ``&quot;skip&quot;`` or ``None``). Labels of the bisect marks (English; shown through ``QtPipelineModel.tr``).</extracomment>
        <translation>出错步骤</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>bisect: good</source>
        <translation>二分查找：正确</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>bisect: bad</source>
        <translation>二分查找：错误</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>bisect: skipped</source>
        <translation>二分查找：已跳过</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>not run</source>
        <extracomment>The culprit&apos;s colour: a violet apart from the state colours, mid value so it reads on light and dark bases. Human labels for step states (English; shown through ``QtPipelineModel.tr``).</extracomment>
        <translation>未运行</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>running…</source>
        <translation>运行中…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>changed</source>
        <translation>有改变</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>unchanged</source>
        <translation>无改变</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>skipped</source>
        <translation>已跳过</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <location line="+190"/>
        <source>not run (an earlier step failed)</source>
        <translation>未运行（之前的步骤失败）</translation>
    </message>
    <message>
        <location line="+184"/>
        <source>cached</source>
        <extracomment>Marks of the last Find Breaking Step: uid -&gt; (mark, tooltip line); cleared by any edit.</extracomment>
        <translation>已缓存</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>unknown pass</source>
        <translation>未知 Pass</translation>
    </message>
    <message>
        <location line="+36"/>
        <source>state: {state}</source>
        <translation>状态：{state}</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>time: {time}</source>
        <translation>用时：{time}</translation>
    </message>
    <message>
        <location line="+1"/>
        <source> (cached)</source>
        <translation>（已缓存）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>params: {params}</source>
        <translation>参数：{params}</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>error: {message}</source>
        <translation>错误：{message}</translation>
    </message>
</context>
<context>
    <name>QtProfileDiffModel</name>
    <message>
        <location filename="../../widgets/profile_view.py" line="-272"/>
        <source>Function</source>
        <translation>函数</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Before / run</source>
        <translation>之前 / 每次运行</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>After / run</source>
        <translation>之后 / 每次运行</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Change</source>
        <translation>变化</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Ratio</source>
        <translation>比值</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Share</source>
        <translation>占比</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>After minus before; sorted by the size of the change</source>
        <translation>之后减之前；按变化幅度排序</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>After / before (below 1: faster)</source>
        <translation>之后 / 之前（小于 1：更快）</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Share of each profile&apos;s total</source>
        <translation>在各自剖析总耗时中的占比</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>added</source>
        <translation>新增</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>removed</source>
        <translation>移除</translation>
    </message>
    <message>
        <location line="+46"/>
        <source>%1 (%2) is only in the later profile (a new or renamed function): %3 per run</source>
        <translation>%1（%2）只出现在较后的剖析中（新函数或被重命名）：每次运行 %3</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>%1 (%2) is only in the earlier profile (gone or renamed): %3 per run</source>
        <translation>%1（%2）只出现在较早的剖析中（已消失或被重命名）：每次运行 %3</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>%1 (%2): %3 → %4 per run, %5 → %6 calls</source>
        <translation>%1（%2）：每次运行 %3 → %4，调用 %5 → %6 次</translation>
    </message>
</context>
<context>
    <name>QtProfileModel</name>
    <message>
        <location line="-111"/>
        <source>Function</source>
        <extracomment>Role carrying the raw sort value of a cell. Role carrying the share (0..1) for the bar delegate.</extracomment>
        <translation>函数</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Calls</source>
        <translation>调用次数</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Total / run</source>
        <translation>每次运行总计</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Mean / call</source>
        <translation>每次调用平均</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Share</source>
        <translation>占比</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>%1 (%2): %3 calls, %4 per run (min %5, max %6 over the runs)</source>
        <translation>%1（%2）：%3 次调用，每次运行 %4（各次运行最小 %5，最大 %6）</translation>
    </message>
</context>
<context>
    <name>Reduce</name>
    <message>
        <location filename="../../pipeline_model/debugging/reduce.py" line="+141"/>
        <source>dropped unreachable functions and unused bindings</source>
        <extracomment>The last candidate accepted (the engine&apos;s dict: ``op``, ``function``, ``at``, ``from``, ``to``). Called after every check with the best module so far (the GUI&apos;s progress). The smallest failing module so far (kept when the loop is interrupted or stopped mid-request). Modules checked and found not to fail the same way (a candidate that makes one again is not checked).</extracomment>
        <translation>删除了不可达的函数和未使用的绑定</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>cut {0} after binding {1} (returns it)</source>
        <translation>在绑定 {1} 之后截断 {0}（返回该值）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>bindings before {0} of {1} became parameters</source>
        <translation>{1} 中 {0} 之前的绑定变为参数</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>dimension {0} became {1}</source>
        <translation>维度 {0} 变为 {1}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>dropped the unused parameters of {0}</source>
        <translation>删除了 {0} 未使用的参数</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>binding {0} of {1} became a parameter</source>
        <translation>{1} 的绑定 {0} 变为参数</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>binding {0} of {1} left out (its argument used instead)</source>
        <translation>省略了 {1} 的绑定 {0}（改用其参数）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>dropped the function {0}</source>
        <translation>删除了函数 {0}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>inlined the function {0}</source>
        <translation>内联了函数 {0}</translation>
    </message>
</context>
<context>
    <name>ReduceDialog</name>
    <message>
        <location filename="../../app/reduce_controller.py" line="-147"/>
        <source>Reduce Reproducer</source>
        <translation>精简复现包</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>a folder saved by Save Reproducer (repro.py, repro.json)</source>
        <translation>由“保存复现包”保存的文件夹（repro.py、repro.json）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>a new or empty folder for the reduced reproducer</source>
        <translation>用于精简后复现包的新文件夹或空文件夹</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Reproducer:</source>
        <translation>复现包：</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Reduced into:</source>
        <translation>精简到：</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Reduce</source>
        <translation>精简</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Stop after the check in flight and write the smallest module so far</source>
        <translation>在当前检查结束后停止，并写出目前最小的模块</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Reductions that still fail the same way:</source>
        <translation>仍以相同方式失败的精简：</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
</context>
<context>
    <name>ReproFolder</name>
    <message>
        <location filename="../../widgets/repro_texts.py" line="+19"/>
        <source>a string</source>
        <extracomment>What a field of ``repro.json`` must be (``repro_folder._TYPE_NAMES``), translated.</extracomment>
        <translation>字符串</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>an object</source>
        <translation>对象</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>an integer</source>
        <translation>整数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>a list</source>
        <translation>列表</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>true or false</source>
        <translation>真或假</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>{0} or {1}</source>
        <translation>{0}或{1}</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>reproducer folder {0} is under {1} (a system folder); refused</source>
        <translation>复现包文件夹 {0} 位于 {1}（系统文件夹）之下；已拒绝</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>reproducer folder {0} is {1}, not a folder</source>
        <translation>复现包文件夹 {0} 是{1}，不是文件夹</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>reproducer folder {0}: {1}</source>
        <translation>复现包文件夹 {0}：{1}</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>cannot read {0}</source>
        <translation>无法读取 {0}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>{0}: not a reproducer description (a JSON object); it holds {1}</source>
        <translation>{0}：不是复现包描述（一个 JSON 对象）；其内容是{1}</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>{0}: the field {1} is missing</source>
        <translation>{0}：缺少字段 {1}</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>{0}: {1} must be {2}</source>
        <translation>{0}：{1} 必须是{2}</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>{0}: kind {1} is not one of {2}</source>
        <translation>{0}：kind {1} 不是 {2} 之一</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>{0}: step_index {1} is out of range</source>
        <translation>{0}：step_index {1} 超出范围</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>{0}: pieces[{1}] must be an object of lists of strings</source>
        <translation>{0}：pieces[{1}] 必须是值为字符串列表的对象</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>{0}: line {1}: not valid JSON ({2})</source>
        <translation>{0}：第 {1} 行：不是有效的 JSON（{2}）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>{0}: nested too deeply to be a reproducer description</source>
        <translation>{0}：嵌套过深，不可能是复现包描述</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>{0}: line {1}: not valid Python ({2})</source>
        <translation>{0}：第 {1} 行：不是有效的 Python（{2}）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>{0}: cannot be parsed (nested too deeply, or not Python text)</source>
        <translation>{0}：无法解析（嵌套过深，或不是 Python 文本）</translation>
    </message>
    <message>
        <location line="+26"/>
        <source>the process dies with signal {0} when the module after the step is built and run</source>
        <extracomment>What a reproducer expects, by kind (``{0}``, ``{1}``: values).</extracomment>
        <translation>构建并运行该步骤之后的模块时，进程因信号 {0} 终止</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>the process dies with signal {0} while the step runs</source>
        <translation>运行该步骤时，进程因信号 {0} 终止</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>the step does not finish within {0} s</source>
        <translation>该步骤在 {0} 秒内没有结束</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>the outputs before and after the step differ beyond rtol {0}, atol {1} × max|ref|</source>
        <translation>该步骤前后的输出之差超出 rtol {0}、atol {1} × 参照最大绝对值</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>building or running the module after the step fails</source>
        <translation>构建或运行该步骤之后的模块失败</translation>
    </message>
</context>
<context>
    <name>RunPanel</name>
    <message>
        <location filename="../../widgets/run_panel.py" line="+150"/>
        <source>max |diff| / max |ref| = {ratio} (max |ref| {ref}; tolerance scaled to the {scale})</source>
        <translation>最大绝对误差 / 参照最大绝对值 = {ratio}（参照最大绝对值 {ref}；容差按{scale}缩放）</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>Warning</source>
        <translation>警告</translation>
    </message>
    <message>
        <location line="+139"/>
        <source>Device and target to build for (devices detected by the engine)</source>
        <translation>构建所用的设备和目标（引擎检测到的设备）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Advanced…</source>
        <translation>高级…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Edit the target as JSON (checked by the engine)</source>
        <translation>以 JSON 编辑目标（由引擎检查）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Detect devices again</source>
        <translation>重新检测设备</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>Final module (all steps)</source>
        <translation>最终模块（所有步骤）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Module after the selected step</source>
        <translation>所选步骤之后的模块</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Random, seed</source>
        <translation>随机，种子</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>File</source>
        <translation>文件</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>.npy / .npz (arrays named like the inputs)</source>
        <translation>.npy / .npz（数组与输入同名）</translation>
    </message>
    <message>
        <location line="+34"/>
        <source>repeats</source>
        <translation>重复</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>× runs</source>
        <translation>× 次运行</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Profile</source>
        <translation>性能剖析</translation>
    </message>
    <message>
        <source>Also time every PrimFunc / packed function call with the VM&apos;s instrumentation (Profile panel, heat overlay on the graph)</source>
        <translation type="vanished">同时用 VM 的插桩为每次 PrimFunc / PackedFunc 调用计时（性能剖析面板、图上的热度叠加）</translation>
    </message>
    <message>
        <location line="-121"/>
        <source>Target</source>
        <translation>目标</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Module</source>
        <translation>模块</translation>
    </message>
    <message>
        <location line="-140"/>
        <location line="+141"/>
        <location line="+247"/>
        <source>Inputs</source>
        <translation>输入</translation>
    </message>
    <message>
        <location filename="../../widgets/build_texts.py" line="-9"/>
        <source>baseline (model as loaded)</source>
        <translation>基线（加载时的模型）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>the reference (TVM&apos;s default pipeline on the model as loaded, CPU)</source>
        <translation>参照（TVM 默认流水线处理加载时的模型，CPU）</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>pipeline &apos;{0}&apos;</source>
        <translation>流水线 &apos;{0}&apos;</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>the model&apos;s</source>
        <translation>模型自带</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>random</source>
        <translation>随机</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>file</source>
        <translation>文件</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>output</source>
        <translation>输出</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>absolute</source>
        <translation>绝对值</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>model as loaded, tvm.compile default pipeline, llvm</source>
        <translation>加载时的模型，tvm.compile 默认流水线，llvm</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>model as loaded, each op in float64 rounded to float32, tvm.compile default pipeline, llvm</source>
        <translation>加载时的模型，每个算子以 float64 计算并舍入到 float32，tvm.compile 默认流水线，llvm</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>model as loaded, tvm.compile default pipeline, {0}</source>
        <translation>加载时的模型，tvm.compile 默认流水线，{0}</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>random (seed {0})</source>
        <translation>随机（种子 {0}）</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>tvm.compile for {0} failed: {1}</source>
        <extracomment>The fixed framing of the engine&apos;s build errors (a pattern of the first line, its text for people); what the groups hold (TVM&apos;s words, a file, a step) is shown as it is.</extracomment>
        <translation>为 {0} 执行 tvm.compile 失败：{1}</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>running {0} failed: {1}</source>
        <translation>运行 {0} 失败：{1}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>the pipeline failed at step {0} ({1}): {2}</source>
        <translation>流水线在第 {0} 步（{1}）失败：{2}</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>the pipeline run failed: {0}</source>
        <translation>流水线运行失败：{0}</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>invalid target {0}: {1}</source>
        <translation>无效的目标 {0}：{1}</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>inputs file {0}: no such file</source>
        <translation>输入文件 {0}：文件不存在</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>export_library to {0} failed: {1}</source>
        <translation>导出库到 {0} 失败：{1}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>The engine was restarted and no longer holds this module; Run (F5) makes it again.</source>
        <translation>引擎已重启，不再保留此模块；运行（F5）会重新生成它。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>refusing to build for {0}: {1} PrimFunc(s) have no GPU thread binding and would run unscheduled: {2}. Fix: add a DLight step (dlight.ApplyDefaultSchedule with gpu rules such as gpu.Matmul, gpu.GEMV, gpu.Reduction, gpu.GeneralReduction, gpu.Fallback) or a MetaSchedule tuning step after legalization</source>
        <translation>拒绝为 {0} 构建：{1} 个 PrimFunc 没有 GPU 线程绑定，会以未调度的方式运行：{2}。解决办法：在合法化（LegalizeOps）之后添加一个 DLight 步骤（dlight.ApplyDefaultSchedule，使用 gpu.Matmul、gpu.GEMV、gpu.Reduction、gpu.GeneralReduction、gpu.Fallback 等 gpu 规则）或一个 MetaSchedule 调优步骤</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>building and running the reference (TVM&apos;s default pipeline on the model as loaded, CPU)</source>
        <extracomment>The engine&apos;s progress lines of a build (``pipeline_model.engine.build``): the module a line names is shown as :func:`shown_label` reads it.</extracomment>
        <translation>正在构建并运行参照（TVM 默认流水线处理加载时的模型，CPU）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>building the reference (TVM&apos;s default pipeline on the model as loaded, CPU)</source>
        <translation>正在构建参照（TVM 默认流水线处理加载时的模型，CPU）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>the reference failed</source>
        <translation>参照失败</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>reference ready</source>
        <translation>参照已就绪</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>building {0} for {1}</source>
        <translation>正在为 {1} 构建{0}</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>testing the model as loaded</source>
        <translation>正在测试加载时的模型</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>testing the module after step {0} ({1})</source>
        <translation>正在测试步骤 {0}（{1}）之后的模块</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>testing the pipeline without step {0} ({1})</source>
        <translation>正在测试去掉步骤 {0}（{1}）后的流水线</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>running the pipeline ({0} steps)</source>
        <translation>正在运行流水线（{0} 个步骤）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>running the pipeline</source>
        <translation>正在运行流水线</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>running the original model in its framework</source>
        <translation>正在原框架中运行原始模型</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>running {0}</source>
        <translation>正在运行{0}</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>timing {0} modules in turn (warmed up)</source>
        <translation>正在轮流计时 {0} 个模块（已预热）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>warming up {0} modules</source>
        <translation>正在预热 {0} 个模块</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>timing {0}</source>
        <translation>正在计时{0}</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>profiling {0} (time of every call)</source>
        <translation>正在剖析{0}（每次调用的用时）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>comparing outputs</source>
        <translation>正在比较输出</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>loading model {0}</source>
        <translation>正在加载模型 {0}</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>writing {0}</source>
        <translation>正在写出 {0}</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>output {0}: the reference is all zeros: the check cannot tell a right result from a wrong one (use real inputs/weights)</source>
        <extracomment>The check&apos;s warnings (``pipeline_model.scriptlib.outputs.compare_outputs``).</extracomment>
        <translation>输出 {0}：参照全为零，检查无法区分正确与错误的结果（请使用真实的输入/权重）</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>output {0}: the reference is tiny (max |ref| = {1} &lt; {2}): the check compares rounding noise (use real inputs/weights)</source>
        <translation>输出 {0}：参照的数值极小（参照最大绝对值 = {1} &lt; {2}），检查比较的只是舍入噪声（请使用真实的输入/权重）</translation>
    </message>
    <message>
        <location line="+36"/>
        <source>The engine reported an error:</source>
        <translation>引擎报告了一个错误：</translation>
    </message>
    <message>
        <location filename="../../widgets/run_panel.py" line="-435"/>
        <source>({time} of warm-up)</source>
        <extracomment>Module choices of the &quot;Module&quot; combo (data values).</extracomment>
        <translation>（预热 {time}）</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>{label} — {function} on {device}, target {target}; built in {time}; weights: {weights}</source>
        <translation>{label} — {function}，设备 {device}，目标 {target}；构建用时 {time}；权重：{weights}</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>✗ check failed</source>
        <translation>✗ 检查出错</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>✓ check passed</source>
        <translation>✓ 检查通过</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>✗ check FAILED</source>
        <translation>✗ 检查未通过</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>✗ not checked: the reference (TVM&apos;s default pipeline on the model as loaded) failed; this module built and ran</source>
        <translation>✗ 未检查：参考结果（TVM 默认流水线处理的原始模型）失败；本模块已构建并运行</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>max abs error {abs}, max rel error {rel} (rtol {rtol}, atol {atol}) vs {reference}</source>
        <translation>最大绝对误差 {abs}，最大相对误差 {rel}（rtol {rtol}，atol {atol}），参照 {reference}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>the unoptimized model</source>
        <translation>未优化的模型</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>the default-pipeline reference failed ({failure}), so this is the fallback</source>
        <translation>默认流水线的参考结果失败（{failure}），因此这是后备参考</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>int8 model: tolerance = 1 quantization step ({step})</source>
        <translation>int8 模型：容差 = 1 个量化步长（{step}）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>tolerance chosen for {dtype}, the module&apos;s lowest precision</source>
        <translation>容差按模块中最低精度 {dtype} 选取</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Latency</source>
        <translation>延迟</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Outputs</source>
        <translation>输出</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>median {median}, spread {spread} (min {min}, max {max}, std {std}); {repeat} repeats × {number} runs after {warmup} warm-up runs</source>
        <translation>中位数 {median}，波动 {spread}（最小 {min}，最大 {max}，标准差 {std}）；预热 {warmup} 次后测量 {repeat} 轮 × 每轮 {number} 次</translation>
    </message>
    <message>
        <source>No profile: profiling runs on devices of this machine only (its VM instrument is a Python callback, which TVM cannot call on an RPC device).</source>
        <translation type="vanished">没有性能剖析：剖析只在本机的设备上运行（它的 VM 插桩是一个 Python 回调，TVM 无法在 RPC 设备上调用它）。</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>min {min}, max {max}, mean {mean}, std {std}</source>
        <translation>最小 {min}，最大 {max}，均值 {mean}，标准差 {std}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>{nan} NaN, {inf} Inf</source>
        <translation>{nan} 个 NaN，{inf} 个 Inf</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>output {index}</source>
        <translation>输出 {index}</translation>
    </message>
    <message>
        <location line="+86"/>
        <source>{0}: max abs {1}, max rel {2}</source>
        <translation>{0}：最大绝对误差 {1}，最大相对误差 {2}</translation>
    </message>
    <message>
        <location line="+34"/>
        <source>Check</source>
        <translation>检查</translation>
    </message>
    <message>
        <location line="+98"/>
        <source>auto</source>
        <translation>自动</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Empty: chosen from the lowest floating-point precision in the built module (1e-4 for float32, 1e-2 for float16, 5e-2 for bfloat16)</source>
        <translation>留空：按构建模块中最低的浮点精度选取（float32 为 1e-4，float16 为 1e-2，bfloat16 为 5e-2）</translation>
    </message>
    <message>
        <location line="+21"/>
        <source>Also time every PrimFunc / packed function call with the VM&apos;s instrumentation; on an RPC device every kernel is timed there by itself (Profile panel, heat overlay on the graph)</source>
        <translation>同时用 VM 的插桩为每次 PrimFunc / PackedFunc 调用计时；在 RPC 设备上则在该设备上为每个内核单独计时（性能剖析面板、图上的热度叠加）</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Build &amp;&amp; Run</source>
        <translation>构建并运行</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Build the module, run it, time it and check it against the unoptimized model (Ctrl+B)</source>
        <translation>构建模块、运行、计时，并与未优化的模型对比检查 (Ctrl+B)</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Compare with Baseline</source>
        <translation>与基线比较</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Build the model as loaded (default pipeline) and this pipeline; run both on the same inputs</source>
        <translation>分别构建原始模型（默认流水线）和此流水线，并用相同输入运行两者</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Export Library…</source>
        <translation>导出库…</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Build and write model.so, weights.npz, model.json and deploy.py into a folder</source>
        <translation>构建并将 model.so、weights.npz、model.json 和 deploy.py 写入一个文件夹</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <location line="+19"/>
        <source>Build &amp; Run (Ctrl+B) to see outputs, latency and the numerical check.</source>
        <translation>“构建并运行” (Ctrl+B) 后在此查看输出、延迟和数值检查。</translation>
    </message>
    <message>
        <location line="+190"/>
        <source>Exported {library}; run it with: {command}</source>
        <translation>已导出 {library}；运行方式：{command}</translation>
    </message>
    <message>
        <source>CPU: generic llvm</source>
        <translation type="vanished">CPU：通用 llvm</translation>
    </message>
    <message>
        <source>Custom: {target}</source>
        <translation type="vanished">自定义：{target}</translation>
    </message>
    <message>
        <location line="-101"/>
        <source>NumPy arrays (*.npy *.npz);;All files (*)</source>
        <translation>NumPy 数组 (*.npy *.npz);;所有文件 (*)</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>Export the built library into</source>
        <translation>将构建的库导出到</translation>
    </message>
    <message>
        <location line="+33"/>
        <source>Built and ran</source>
        <translation>已构建并运行</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>median {time}</source>
        <translation>中位数 {time}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>check passed</source>
        <translation>检查通过</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>check FAILED</source>
        <translation>检查失败</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>{count} check warning(s)</source>
        <translation>{count} 条校验警告</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>profiled</source>
        <translation>已剖析</translation>
    </message>
    <message>
        <source>speed-up {value}×</source>
        <translation type="vanished">加速 {value}×</translation>
    </message>
    <message>
        <source>Compared: speed-up {value}× over the baseline</source>
        <translation type="vanished">比较完成：相对基线加速 {value}×</translation>
    </message>
    <message>
        <location line="+21"/>
        <source>Last Build &amp;amp; Run</source>
        <translation>上一次构建并运行</translation>
    </message>
    <message>
        <source>Exported {library}; run it with: python {script}</source>
        <translation type="vanished">已导出 {library}；运行方式：python {script}</translation>
    </message>
    <message>
        <location line="+36"/>
        <source>Exported</source>
        <translation>已导出</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>library</source>
        <translation>库</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>weights</source>
        <translation>权重</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>metadata</source>
        <translation>元数据</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>deploy script</source>
        <translation>部署脚本</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Run it: {command}</source>
        <translation>运行：{command}</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <location line="-435"/>
        <source>ratio of the medians {value}× (no repeats: the spread is unknown)</source>
        <translation>中位数之比 {value}×（没有重复测量：离散程度未知）</translation>
    </message>
    <message>
        <location line="-63"/>
        <source>No profile: timing the kernels on the RPC device failed ({error}).</source>
        <translation>没有性能剖析：在 RPC 设备上为内核计时失败（{error}）。</translation>
    </message>
    <message>
        <location line="+71"/>
        <source>{pipeline} against {baseline}: {verdict}</source>
        <translation>{pipeline} 对比 {baseline}：{verdict}</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>median of the per-round ratios, timed in turn</source>
        <translation>逐轮比值的中位数，轮流计时</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>ratio of the medians</source>
        <translation>中位数之比</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>latency pipeline / baseline {ratio} ({how}); {level} % interval {low} – {high} over {n} repeats; differences under {effect} % are not called significant</source>
        <translation>延迟 流水线 / 基线 {ratio}（{how}）；{level} % 区间 {low} – {high}（{n} 次重复）；小于 {effect} % 的差异不视为显著</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>IQR {low} – {high}</source>
        <translation>四分位距 {low} – {high}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>{label}: median {median} {spread} (min {min}, max {max}); built in {time}</source>
        <translation>{label}：中位数 {median} {spread}（最小 {min}，最大 {max}）；构建用时 {time}</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>✓ same results</source>
        <translation>✓ 结果相同</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>✗ results differ</source>
        <translation>✗ 结果不同</translation>
    </message>
    <message>
        <location line="+256"/>
        <source>{0} {1} is not a number (e.g. 1e-4)</source>
        <translation>{0} {1} 不是数字（例如 1e-4）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>{0} must not be negative</source>
        <translation>{0} 不能为负</translation>
    </message>
    <message>
        <location line="+83"/>
        <source>baseline</source>
        <translation>基线</translation>
    </message>
    <message>
        <location filename="../../widgets/build_texts.py" line="-142"/>
        <location filename="../../widgets/run_panel.py" line="+1"/>
        <source>pipeline</source>
        <translation>流水线</translation>
    </message>
    <message>
        <location filename="../../widgets/run_panel.py" line="+3"/>
        <source>Compared with the baseline: {verdict}</source>
        <translation>与基线比较：{verdict}</translation>
    </message>
</context>
<context>
    <name>ShortcutsDialog</name>
    <message>
        <location filename="../../app/help_controller.py" line="+13"/>
        <source>Keyboard Shortcuts</source>
        <translation>键盘快捷键</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Menu</source>
        <translation>菜单</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Action</source>
        <translation>操作</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Shortcut</source>
        <translation>快捷键</translation>
    </message>
</context>
<context>
    <name>StepReport</name>
    <message>
        <location filename="../../pipeline_model/passkinds/dlight/__init__.py" line="+99"/>
        <source>no rule applied</source>
        <extracomment>TVM&apos;s DLight rule group (&quot;gpu&quot; of &quot;gpu.Matmul&quot;) -&gt; module holding the rule classes; the other groups are the app&apos;s (``app``) and the plug-ins&apos; rules (:mod:`.rules`, copied into exported scripts). Rules of a new step on a GPU target (those present in this TVM build). Rules of a new step on a CPU target (``gpu.*`` rules schedule nothing there): those of the bundled ``cpu_build.json``. Not TVM&apos;s cpu.* rules: they slowed the CNNs down (docs/PERFORMANCE.md &quot;Default-pipeline choices cited by the code&quot;) and made LLVM take minutes on one function (2026-11-23); a PrimFunc no app rule takes (the tutorial&apos;s 256x10 matrix-vector product) builds as it is.</extracomment>
        <translation>未应用规则</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>already scheduled</source>
        <translation>已调度</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>{0} PrimFunc(s) scheduled, {1} not</source>
        <translation>已调度 {0} 个 PrimFunc，{1} 个未调度</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>{0}: no GPU schedule; building for {1} will fail</source>
        <translation>{0}：没有 GPU 调度；为 {1} 构建将失败</translation>
    </message>
    <message>
        <location line="+3"/>
        <location filename="../../pipeline_model/passkinds/report_html.py" line="+44"/>
        <source>Warning</source>
        <translation>警告</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>{0} PrimFunc(s) have no GPU schedule — add rules (e.g. gpu.Fallback) or a MetaSchedule step.</source>
        <translation>{0} 个 PrimFunc 没有 GPU 调度 — 请添加规则（例如 gpu.Fallback）或 MetaSchedule 步骤。</translation>
    </message>
    <message>
        <location filename="../../pipeline_model/passkinds/fuse_by_pattern/__init__.py" line="+145"/>
        <source>offloaded to {0}</source>
        <extracomment>The code exported scripts contain (and the engine calls): :func:`.script.load_pattern_file`. Warning for a user pattern file fused with ``annotate_codegen=true`` (issue 12: the build then fails).</extracomment>
        <translation>卸载到 {0}</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>in</source>
        <translation>位于</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Fused by pattern</source>
        <translation>按模式融合</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>{0} group(s), highlighted in the graph:</source>
        <translation>{0} 个分组，已在图中高亮：</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>no binding matched the patterns.</source>
        <translation>没有绑定匹配这些模式。</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>Fused by pattern (highlighted in the graph):</source>
        <translation>按模式融合（已在图中高亮）：</translation>
    </message>
    <message>
        <location filename="../../pipeline_model/passkinds/metaschedule/report.py" line="+31"/>
        <source>{done}/{total} trials, stopped</source>
        <translation>{done}/{total} 次试验，已停止</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>{done}/{total} trials, done</source>
        <translation>{done}/{total} 次试验，已完成</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>{done}/{total} trials</source>
        <translation>{done}/{total} 次试验</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>database</source>
        <translation>数据库</translation>
    </message>
    <message>
        <location line="+17"/>
        <source>{0} record(s) measured, a best schedule for {1} of {2} PrimFunc(s)</source>
        <translation>已测量 {0} 条记录，{2} 个 PrimFunc 中 {1} 个有最佳调度</translation>
    </message>
    <message>
        <location line="+27"/>
        <source>Tuning database lines skipped</source>
        <translation>已跳过的调优数据库行</translation>
    </message>
    <message>
        <location line="+23"/>
        <source>Seeded with the app&apos;s schedules ({0})</source>
        <translation>以应用自身的调度作为种子（{0}）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>{seeded} PrimFunc(s) seeded, {skipped} refused, {no_rule} without a rule (in {seconds:.0f} s); best schedule: the app&apos;s for {app}, a tuned one for {tuned}</source>
        <translation>已为 {seeded} 个 PrimFunc 提供种子，{skipped} 个被拒绝，{no_rule} 个没有适用规则（用时 {seconds:.0f} 秒）；最佳调度：{app} 个为应用自身的，{tuned} 个为调优得到的</translation>
    </message>
    <message>
        <location line="+26"/>
        <source>From the user database (no trials)</source>
        <translation>来自用户数据库（无需试验）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>From this pipeline&apos;s earlier tuning</source>
        <translation>来自此流水线之前的调优</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Tuned now</source>
        <translation>本次调优</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Not tuned (a later schedule step, if any, schedules them)</source>
        <translation>未调优（如有后续调度步骤，由其调度）</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>user tuning database {path}: {added} record(s) added</source>
        <translation>用户调优数据库 {path}：新增 {added} 条记录</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>user tuning database off</source>
        <translation>用户调优数据库已关闭</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Time budget {budget:.0f} s, spent {spent:.0f} s, ends: {end}</source>
        <translation>时间预算 {budget:.0f} 秒，已用 {spent:.0f} 秒，结束原因：{end}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>round</source>
        <translation>轮次</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>weights</source>
        <translation>权重</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>trials asked</source>
        <translation>请求的试验数</translation>
    </message>
    <message>
        <location line="-85"/>
        <location line="+86"/>
        <source>measured</source>
        <translation>已测量</translation>
    </message>
    <message>
        <location line="-98"/>
        <source>, on {0} RPC device(s)</source>
        <translation>，在 {0} 台 RPC 设备上</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Measured on {0} RPC device(s)</source>
        <translation>在 {0} 台 RPC 设备上测量</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>device</source>
        <translation>设备</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>re-queued</source>
        <translation>重新排队</translation>
    </message>
    <message>
        <location line="+85"/>
        <source>seconds</source>
        <translation>秒</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Not reached before the deadline: {0}</source>
        <translation>截止时间前未轮到：{0}</translation>
    </message>
    <message>
        <location line="+15"/>
        <source>the stored profile</source>
        <translation>已保存的性能剖析</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>a profile measured for this step</source>
        <translation>为此步骤测量的性能剖析</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>no profile</source>
        <translation>无性能剖析</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Targeted</source>
        <translation>定向调优</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>focus {focus}, budget {budget} trials, from {source}, own schedule function</source>
        <translation>焦点 {focus}，预算 {budget} 次试验，依据 {source}，使用自定义调度函数</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>focus {focus}, budget {budget} trials, from {source}</source>
        <translation>焦点 {focus}，预算 {budget} 次试验，依据 {source}</translation>
    </message>
    <message>
        <location line="+2"/>
        <location line="+77"/>
        <source>PrimFunc</source>
        <translation>PrimFunc</translation>
    </message>
    <message>
        <location line="-76"/>
        <source>time share</source>
        <translation>时间占比</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>trials</source>
        <translation>试验次数</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Not tuned: {0}</source>
        <translation>未调优：{0}</translation>
    </message>
    <message>
        <location line="+14"/>
        <source>Best schedule of {0}</source>
        <translation>{0} 的最佳调度</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>full text:</source>
        <translation>完整文本：</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>Tuned schedules applied</source>
        <translation>已应用调优后的调度</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>to {0} PrimFunc(s); none found for {1}</source>
        <translation>应用于 {0} 个 PrimFunc；{1} 个没有找到调度</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>tuned schedule kept for {0} of {1} PrimFunc(s) (faster in the model beyond noise), the default schedule for {2}</source>
        <translation>{1} 个 PrimFunc 中 {0} 个保留调优后的调度（在模型中快于噪声范围），{2} 个保留默认调度</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>faster beyond noise: tuned kept</source>
        <translation>快于噪声范围：保留调优调度</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>slower beyond noise: default kept</source>
        <translation>慢于噪声范围：保留默认调度</translation>
    </message>
    <message>
        <location line="+1"/>
        <location line="+1"/>
        <source>within noise: default kept</source>
        <translation>在噪声范围内：保留默认调度</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>too few runs to tell: default kept</source>
        <translation>运行次数太少，无法判断：保留默认调度</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>not timed in the model: default kept</source>
        <translation>未在模型中计时：保留默认调度</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>overruled: the whole model is not faster beyond noise, default kept</source>
        <translation>被否决：整个模型没有快于噪声范围，保留默认调度</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>tuned</source>
        <translation>调优</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>default</source>
        <translation>默认</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>verdict</source>
        <translation>结论</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>whole model ({0}): tuned {1} vs default {2}, {3}</source>
        <translation>整个模型（{0}）：调优 {1}，默认 {2}，{3}</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>every tuned schedule</source>
        <translation>全部调优调度</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>the kept tuned schedules</source>
        <translation>保留的调优调度</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>faster beyond noise</source>
        <translation>快于噪声范围</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>slower beyond noise</source>
        <translation>慢于噪声范围</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>within noise</source>
        <translation>在噪声范围内</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>{0} PrimFunc(s) whose best record is the default schedule itself (not timed): {1}</source>
        <translation>{0} 个 PrimFunc 的最佳记录就是默认调度本身（未计时）：{1}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>Kept only where faster in the model</source>
        <translation>只在模型中更快时保留</translation>
    </message>
</context>
<context>
    <name>TargetEditorDialog</name>
    <message>
        <location filename="../../widgets/target_editor.py" line="+33"/>
        <source>Compilation target (JSON)</source>
        <translation>编译目标（JSON）</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>A TVM target as a JSON object with a &lt;code&gt;kind&lt;/code&gt;, e.g. {examples}. The engine checks it with &lt;code&gt;tvm.target.Target&lt;/code&gt;.</source>
        <translation>以 JSON 对象表示的 TVM 目标，需包含 &lt;code&gt;kind&lt;/code&gt;，例如 {examples}。引擎会用 &lt;code&gt;tvm.target.Target&lt;/code&gt; 检查它。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source> or </source>
        <translation> 或 </translation>
    </message>
    <message>
        <location line="+10"/>
        <source>Check</source>
        <translation>检查</translation>
    </message>
    <message>
        <location line="+31"/>
        <source>Checking with the engine…</source>
        <translation>正在由引擎检查…</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>the engine refused this target</source>
        <translation>引擎拒绝了此目标</translation>
    </message>
    <message>
        <location line="+6"/>
        <source>✓ valid: {kind} (keys: {keys})</source>
        <translation>✓ 有效：{kind}（keys：{keys}）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>✓ valid: {kind}</source>
        <translation>✓ 有效：{kind}</translation>
    </message>
</context>
<context>
    <name>TargetPicker</name>
    <message>
        <location filename="../../widgets/target_picker.py" line="+38"/>
        <source>compiles ✓</source>
        <extracomment>Item-data role marking the custom entry (its text is translated). Item-data role of a preset&apos;s :class:`TargetSupport` (as JSON). Item-data role of an RPC device entry: ``{&quot;tracker&quot;: &quot;HOST:PORT&quot;, &quot;key&quot;: ...}``.</extracomment>
        <translation>可编译 ✓</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>compiles ✗</source>
        <translation>可编译 ✗</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>runs here ✓</source>
        <translation>本机可运行 ✓</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>runs here ✗</source>
        <translation>本机可运行 ✗</translation>
    </message>
    <message>
        <location line="+22"/>
        <source>{0}, {1} cores</source>
        <extracomment>The engine&apos;s name of the CPU device (``pipeline_model.engine.build.devices``).</extracomment>
        <translation>{0}，{1} 核</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>This TVM build compiles for it.</source>
        <translation>当前 TVM 构建可以为它编译。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Cannot compile: {reason}</source>
        <translation>无法编译：{reason}</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>A device on this machine runs it.</source>
        <translation>本机有可运行它的设备。</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Cannot run here: {reason} (build it here, run it elsewhere)</source>
        <translation>本机无法运行：{reason}（可在本机构建，在其他机器上运行）</translation>
    </message>
    <message>
        <location line="+11"/>
        <source>CPU: the machine that builds (llvm -mcpu=native -O{level})</source>
        <translation>CPU：执行构建的机器（llvm -mcpu=native -O{level}）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>CPU: the machine that builds (llvm -mcpu=native)</source>
        <translation>CPU：执行构建的机器（llvm -mcpu=native）</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>CPU: this machine (llvm -mcpu={mcpu}, {cores} cores)</source>
        <translation>CPU：本机（llvm -mcpu={mcpu}，{cores} 核）</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>CPU</source>
        <translation>CPU</translation>
    </message>
    <message>
        <location line="+34"/>
        <source>Devices on this machine</source>
        <translation>本机设备</translation>
    </message>
    <message>
        <location line="-49"/>
        <location line="+69"/>
        <source>CPU: generic llvm</source>
        <translation>CPU：通用 llvm</translation>
    </message>
    <message>
        <location line="-107"/>
        <source>ROCm&apos;s device libraries are not on this machine ({0}): install ROCm or set ROCM_PATH</source>
        <extracomment>The engine&apos;s reasons a target cannot be compiled or run here (``pipeline_model.engine.build.devices``): what TVM said stays as it is, in a code font.</extracomment>
        <translation>本机没有 ROCm 的设备库（{0}）：请安装 ROCm 或设置 ROCM_PATH</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>ld.lld (the linker ROCm builds need) is not on this machine</source>
        <translation>本机没有 ld.lld（ROCm 构建所需的链接器）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>this TVM build has no {0} code generator ({1})</source>
        <translation>当前 TVM 构建没有 {0} 代码生成器（{1}）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>no {0} device on this machine</source>
        <translation>本机没有 {0} 设备</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>this TVM runtime cannot reach a {0} device</source>
        <translation>当前 TVM 运行时无法访问 {0} 设备</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>this machine&apos;s GPU is {0}</source>
        <translation>本机的 GPU 是 {0}</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>target: {0}</source>
        <translation>目标：{0}</translation>
    </message>
    <message>
        <location line="+93"/>
        <source>RPC devices at {tracker}</source>
        <translation>{tracker} 上的 RPC 设备</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>The tracker did not answer: {error}</source>
        <translation>跟踪器没有应答：{error}</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>No device is registered with the tracker</source>
        <translation>跟踪器上没有注册任何设备</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>RPC {key} — {free}/{total} free (built here, run there)</source>
        <translation>RPC {key} — {free}/{total} 空闲（在本机构建，在那里运行）</translation>
    </message>
    <message>
        <location line="+28"/>
        <source>Custom: {target}</source>
        <translation>自定义：{target}</translation>
    </message>
</context>
<context>
    <name>TuningPanel</name>
    <message>
        <location filename="../../widgets/tuning_panel.py" line="+34"/>
        <source>Task</source>
        <translation>任务</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Trials</source>
        <translation>试验次数</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Best latency</source>
        <translation>最佳延迟</translation>
    </message>
    <message>
        <location line="+0"/>
        <source>Errors</source>
        <translation>错误</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <location line="+7"/>
        <source>tuning</source>
        <translation>调优中</translation>
    </message>
    <message>
        <location line="+1"/>
        <location line="+22"/>
        <source>done</source>
        <translation>完成</translation>
    </message>
    <message>
        <location line="-21"/>
        <source>stopped</source>
        <translation>已停止</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>not reached</source>
        <translation>未轮到</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>not targeted</source>
        <translation>未选中</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>skipped</source>
        <translation>已跳过</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>from user database</source>
        <translation>来自用户数据库</translation>
    </message>
    <message>
        <location line="+13"/>
        <source>stopped; measured trials are kept</source>
        <translation>已停止；已测量的试验会保留</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>all {0} tasks already tuned (reused from the database)</source>
        <translation>全部 {0} 个任务均已调优（复用数据库中的记录）</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>{0} of {1} tasks reused from the database</source>
        <translation>{1} 个任务中有 {0} 个复用了数据库中的记录</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>{0} candidates failed to build or run</source>
        <translation>{0} 个候选调度构建或运行失败</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>search space exhausted (MetaSchedule found no more candidates)</source>
        <translation>搜索空间已穷尽（MetaSchedule 找不到更多候选）</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>ended early: {0}</source>
        <translation>提前结束：{0}</translation>
    </message>
    <message>
        <location line="+13"/>
        <location line="+49"/>
        <source>No tuning step has run yet. Add a MetaSchedule step (relax.MetaScheduleTuneTIR / TuneIRMod) and run.</source>
        <extracomment>How the trial budget splits: TuneTIR&apos;s ``max_trials_global`` is a budget per PrimFunc (TVM tunes each PrimFunc on its own), so the total is that times the number of PrimFuncs.</extracomment>
        <translation>尚未运行任何调优步骤。请添加一个 MetaSchedule 步骤（relax.MetaScheduleTuneTIR / TuneIRMod）并运行。</translation>
    </message>
    <message>
        <location line="-42"/>
        <source>%v / %m trials</source>
        <translation>%v / %m 次试验</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Stop Tuning</source>
        <translation>停止调优</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>End tuning within a few seconds; what was measured is kept in the database and the pipeline goes on (the apply step uses it)</source>
        <translation>在几秒内结束调优；已测量的结果保存在数据库中，流水线继续运行（应用步骤会使用它）</translation>
    </message>
    <message>
        <location line="+53"/>
        <source>Budget: {per} trials per PrimFunc × {tasks} PrimFunc(s) = {total} trials (MetaScheduleTuneTIR&apos;s max_trials_global counts per PrimFunc).</source>
        <translation>预算：每个 PrimFunc {per} 次试验 × {tasks} 个 PrimFunc = {total} 次试验（MetaScheduleTuneTIR 的 max_trials_global 按每个 PrimFunc 计算）。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>Budget: {total} trials shared by {tasks} task(s).</source>
        <translation>预算：{tasks} 个任务共享 {total} 次试验。</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Stopping tuning after this round; measured trials are kept…</source>
        <translation>本轮结束后停止调优；已测量的试验会保留…</translation>
    </message>
    <message>
        <location line="+8"/>
        <source>Tuning: {step}…</source>
        <translation>调优：{step}…</translation>
    </message>
    <message>
        <location line="+20"/>
        <source> — about {eta} left</source>
        <translation> — 约剩 {eta}</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>&lt;b&gt;{pass_id}&lt;/b&gt;: looking the PrimFuncs up in the work folder and the user tuning database, {elapsed}</source>
        <translation>&lt;b&gt;{pass_id}&lt;/b&gt;：正在工作目录和用户调优数据库中查找各 PrimFunc，{elapsed}</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>&lt;b&gt;{pass_id}&lt;/b&gt;: {done} / {total} trials, {elapsed}, runner {runner}</source>
        <translation>&lt;b&gt;{pass_id}&lt;/b&gt;：{done} / {total} 次试验，{elapsed}，运行器 {runner}</translation>
    </message>
    <message>
        <location line="+34"/>
        <source>best schedule: the app&apos;s for {app} PrimFunc(s), a tuned one for {tuned}</source>
        <translation>最佳调度：{app} 个 PrimFunc 为应用自身的，{tuned} 个为调优得到的</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>{seeded} app schedules seeded</source>
        <translation>已提供 {seeded} 个应用调度作为种子</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>RPC devices: {devices}</source>
        <translation>RPC 设备：{devices}</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>{device} {measured} measured</source>
        <translation>{device} 已测量 {measured} 个</translation>
    </message>
    <message>
        <location line="+1"/>
        <source> ({requeued} re-queued)</source>
        <translation>（{requeued} 个重新排队）</translation>
    </message>
    <message>
        <location line="+10"/>
        <source>{share:.1f} % of the measured time; {trials} trials allocated</source>
        <translation>占测得时间的 {share:.1f} %；分配了 {trials} 次试验</translation>
    </message>
    <message>
        <location line="+4"/>
        <source>Best schedule (double-click for the trace and tuned TensorIR):</source>
        <translation>最佳调度（双击查看 trace 和调优后的 TensorIR）：</translation>
    </message>
    <message>
        <location line="+17"/>
        <source># Best schedule trace</source>
        <translation># 最佳调度 trace</translation>
    </message>
    <message>
        <location line="+0"/>
        <source># Tuned TensorIR</source>
        <translation># 调优后的 TensorIR</translation>
    </message>
    <message>
        <location line="+23"/>
        <source>Best schedule of {task}</source>
        <translation>{task} 的最佳调度</translation>
    </message>
    <message>
        <source> — stopped; measured trials are kept</source>
        <translation type="vanished"> — 已停止；已测量的试验已保留</translation>
    </message>
    <message>
        <source> — done</source>
        <translation type="vanished"> — 完成</translation>
    </message>
    <message>
        <source>&lt;b&gt;{pass_id}&lt;/b&gt;: {done} / {total} trials, {elapsed} s, runner {runner}</source>
        <translation type="vanished">&lt;b&gt;{pass_id}&lt;/b&gt;：{done} / {total} 次试验，{elapsed} 秒，运行器 {runner}</translation>
    </message>
    <message>
        <location line="-79"/>
        <source> (reused)</source>
        <translation>（复用）</translation>
    </message>
    <message>
        <location line="+12"/>
        <source>Database: {path}</source>
        <translation>数据库：{path}</translation>
    </message>
</context>
<context>
    <name>_ChoiceField</name>
    <message>
        <location filename="../../widgets/param_editor.py" line="-347"/>
        <source>{value} (not a known choice)</source>
        <translation>{value}（不是已知选项）</translation>
    </message>
</context>
<context>
    <name>_FileField</name>
    <message>
        <location line="+104"/>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <location line="+5"/>
        <source>Choose {name}</source>
        <extracomment>hook for tests: returns a chosen path or &quot;&quot; (defaults to a QFileDialog)</extracomment>
        <translation>选择 {name}</translation>
    </message>
</context>
<context>
    <name>_JsonField</name>
    <message>
        <location line="+58"/>
        <source>not valid JSON (line {line}, column {column}): {message}</source>
        <translation>不是有效的 JSON（第 {line} 行，第 {column} 列）：{message}</translation>
    </message>
</context>
<context>
    <name>_ListField</name>
    <message>
        <location line="-148"/>
        <source>Add</source>
        <translation>添加</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Remove</source>
        <translation>移除</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Up</source>
        <translation>上移</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>Down</source>
        <translation>下移</translation>
    </message>
    <message>
        <location line="+22"/>
        <source>Add item</source>
        <extracomment>hook for tests and scripted use: returns the text of a new free-form item, or None</extracomment>
        <translation>添加项</translation>
    </message>
</context>
<context>
    <name>_NullableField</name>
    <message>
        <location line="+159"/>
        <source>None</source>
        <translation>无</translation>
    </message>
</context>
<context>
    <name>_Overview</name>
    <message>
        <location filename="../../widgets/graph_view.py" line="-505"/>
        <source>Overview: click or drag to move the view</source>
        <extracomment>Layouts kept (per key and expansion). At most this many view nodes in the cached layouts together (the one shown not counted): a layout costs ~1-2 kB per node (a 54,000-node decoder expanded whole: ~100 MB), so one such layout is kept, not one per step; a larger one is dropped before the next one is made (:meth:`_make_room`). Graphs with more nodes are shown before their changes against ``before`` are coloured. The last set_graph got a packed &quot;before&quot; graph&apos;s stand-in it could not colour against (see there).</extracomment>
        <translation>概览：点击或拖动以移动视图</translation>
    </message>
</context>
<context>
    <name>doc_text</name>
    <message>
        <location filename="../../widgets/doc_text.py" line="+19"/>
        <source>TVM&apos;s documentation (as TVM writes it):</source>
        <translation>TVM 的文档（TVM 原文）：</translation>
    </message>
</context>
<context>
    <name>error_trace</name>
    <message>
        <location filename="../../widgets/error_trace.py" line="+49"/>
        <source>, column {0}</source>
        <extracomment>Pseudo file names of custom steps&apos; sources (``pipeline_model.passkinds.custom_python.custom_label``).</extracomment>
        <translation>，第 {0} 列</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>line {0} of {1}</source>
        <translation>{1} 第 {0} 行</translation>
    </message>
    <message>
        <location line="+1"/>
        <source>{0} line {1}</source>
        <translation>{0} 第 {1} 行</translation>
    </message>
    <message>
        <location line="+84"/>
        <source>In your code (innermost last):</source>
        <translation>在您的代码中（最内层在最后）：</translation>
    </message>
    <message>
        <location line="+9"/>
        <source>Full traceback:</source>
        <translation>完整回溯：</translation>
    </message>
</context>
<context>
    <name>models</name>
    <message>
        <location filename="../../pipeline_model/models.py" line="+46"/>
        <source>The MLP of TVM&apos;s &quot;Customize Optimization&quot; tutorial: Linear(784, 256), ReLU, Linear(256, 10, bias=False); input (1, 784) float32.</source>
        <extracomment>Built-in models: name -&gt; description (the file is ``resources/models/&lt;name&gt;.py``).</extracomment>
        <translation>TVM“自定义优化”教程中的 MLP：`Linear(784, 256)`、ReLU、`Linear(256, 10, bias=False)`；输入 (1, 784) float32。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>A small pre-norm transformer encoder block: layer norm, 4-head self-attention (matmul, softmax), GELU MLP; input (1, 32, 128) float32.</source>
        <translation>一个小型的前置归一化 Transformer 编码器块：层归一化、4 头自注意力（`matmul`、`softmax`）、GELU MLP；输入 (1, 32, 128) float32。</translation>
    </message>
    <message>
        <location line="+2"/>
        <source>A Llama-style decoder: 32 layers, hidden 512, RMSNorm, rotary self-attention, SwiGLU MLP; symbolic sequence length, inputs x (1, seq_len, 512), cos/sin (seq_len, 64), mask (1, 1, seq_len, seq_len).</source>
        <translation>一个 Llama 风格的解码器：32 层，隐藏维度 512，RMSNorm，旋转位置编码自注意力，SwiGLU MLP；序列长度为符号维度，输入 `x (1, seq_len, 512)`、`cos/sin (seq_len, 64)`、`mask (1, 1, seq_len, seq_len)`。</translation>
    </message>
    <message>
        <location line="+3"/>
        <source>The Llama-style decoder of builtin:decoder with 128 layers (for benchmarks).</source>
        <translation>builtin:decoder 的 Llama 风格解码器，128 层（用于基准测试）。</translation>
    </message>
</context>
</TS>
