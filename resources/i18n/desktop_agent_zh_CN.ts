<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
    <context>
        <name>ActingPanel</name>
        <message>
            <source>Desktop Agent — acting</source>
            <extracomment>SetWindowDisplayAffinity's "leave this window out of every capture" (Windows 10 2004+)</extracomment>
            <translation>Desktop Agent — 正在操作</translation>
        </message>
        <message>
            <source>Starting…</source>
            <translation>正在开始…</translation>
        </message>
        <message>
            <source>Stop</source>
            <translation>停止</translation>
        </message>
        <message>
            <source>Stop this run (the global stop hotkey works too)</source>
            <translation>停止本次运行（全局停止快捷键同样有效）</translation>
        </message>
        <message>
            <source>Stopping…</source>
            <translation>正在停止…</translation>
        </message>
        <message>
            <source>Paused — resume from the tray or the window</source>
            <extracomment>how long to wait for the window manager to take the minimised window off the screen and then for its iconify animation and the compositor to catch up</extracomment>
            <translation>已暂停 — 可从托盘或窗口继续</translation>
        </message>
        <message>
            <source>Paused: you took over the mouse or keyboard — resume from the tray or the window</source>
            <extracomment>the acting panel's line when the user's own input paused the run</extracomment>
            <translation>已暂停：您接管了鼠标或键盘 — 可从托盘或窗口继续</translation>
        </message>
        <message>
            <source>Resumed — looking at the screen afresh</source>
            <translation>已继续 — 正在重新查看屏幕</translation>
        </message>
        <message>
            <source>Waiting for your approval: {action}</source>
            <translation>等待您的批准：{action}</translation>
        </message>
        <message>
            <source>Allowed</source>
            <translation>已允许</translation>
        </message>
        <message>
            <source>Allowed for this run</source>
            <translation>本次运行中已允许</translation>
        </message>
        <message>
            <source>Denied</source>
            <translation>已拒绝</translation>
        </message>
        <message>
            <source>{answer} ({by}): {action}</source>
            <translation>{answer}（{by}）：{action}</translation>
        </message>
        <message>
            <source>looking at the screen</source>
            <translation>正在查看屏幕</translation>
        </message>
        <message>
            <source>deciding</source>
            <translation>正在决定</translation>
        </message>
        <message>
            <source>chose {tool}</source>
            <translation>选择了 {tool}</translation>
        </message>
        <message>
            <source>the target</source>
            <translation>目标</translation>
        </message>
        <message>
            <source>looking closer for {target}</source>
            <translation>正在仔细查找{target}</translation>
        </message>
        <message>
            <source>Turn {index}{limit} · {what}</source>
            <translation>第 {index}{limit} 轮 · {what}</translation>
        </message>
    </context>
    <context>
        <name>App</name>
        <message>
            <source>data dir {directory} cannot be made: {error}</source>
            <extracomment>how long the app waits for its first paint before loading the rest anyway what the GUI thread's asyncio loop (qasync) needs of the standard library, imported on a worker thread right after the first paint while Qt's own loop goes on what the window's Start needs after the first paint: the host with its store, settings and desktop adapters, and the planner's model check that the window asks once bound (openai is left to the first run). Not the local API's server: aiohttp is ~0.2 s of imports, made on a worker thread while Start is already on (Host.serve_api) the desktops on which Qt takes GTK 3's platform theme (the "gtk3" plugin, and GTK 3 with it): qtbase src/gui/platform/unix/qgenericunixtheme.cpp, QGenericUnixTheme::themeNames, gtkBasedEnvironments</extracomment>
            <translation>无法创建数据目录 {directory}：{error}</translation>
        </message>
        <message>
            <source>Stop all failed: {error}</source>
            <translation>全部停止失败：{error}</translation>
        </message>
        <message>
            <source>Stop all: {count} run(s) in other instances.</source>
            <translation>全部停止：其他实例中的 {count} 个运行。</translation>
        </message>
        <message>
            <source>Stopping every run on this data dir…</source>
            <translation>正在停止此数据目录上的所有运行…</translation>
        </message>
        <message>
            <source>Run {status}</source>
            <translation>运行{status}</translation>
        </message>
        <message>
            <source>Waiting for your approval</source>
            <translation>等待你的批准</translation>
        </message>
        <message>
            <source>Paused: you took over</source>
            <translation>已暂停：你接管了操作</translation>
        </message>
        <message>
            <source>Resume from the tray or the window.</source>
            <translation>可从托盘或窗口继续。</translation>
        </message>
        <message>
            <source>Stop all: {here} run(s) here, {elsewhere} in other instances.</source>
            <translation>全部停止：此处 {here} 个运行，其他实例中 {elsewhere} 个。</translation>
        </message>
        <message>
            <source>Your mouse and keyboard will not pause a run: {why}</source>
            <translation>你的鼠标和键盘不会暂停运行：{why}</translation>
        </message>
        <message>
            <source>Stopping every run here; telling other instances…</source>
            <translation>正在停止此处的所有运行；正在通知其他实例…</translation>
        </message>
        <message>
            <source>Desktop Agent is still running</source>
            <translation>Desktop Agent 仍在运行</translation>
        </message>
        <message>
            <source>Quit it from the tray icon's menu.</source>
            <translation>请从托盘图标的菜单中退出。</translation>
        </message>
        <message>
            <source>Error: {error}</source>
            <translation>错误：{error}</translation>
        </message>
        <message>
            <source>Desktop Agent cannot start: {problem}</source>
            <translation>Desktop Agent 无法启动：{problem}</translation>
        </message>
    </context>
    <context>
        <name>ApprovalController</name>
        <message>
            <source>{tool} denied: the approval dialog failed: {error}</source>
            <extracomment>the answers are explained under the buttons until the user has given one</extracomment>
            <translation>已拒绝 {tool}：批准对话框出错：{error}</translation>
        </message>
    </context>
    <context>
        <name>ApprovalDialog</name>
        <message>
            <source>safe</source>
            <extracomment>how often the countdown is redrawn (and the deadline checked), in ms the Allow buttons wake this long after the dialog opened (Deny, Escape and closing work at once): a click or key already on its way when the dialog popped up — another run's click landing where the dialog now is, its alt+o, an Enter typed for the window below — is not the person's answer (the terminal question's MIN_ANSWER_S, cli/gate.py)</extracomment>
            <translation>安全</translation>
        </message>
        <message>
            <source>input — acts with your mouse and keyboard</source>
            <translation>输入 — 使用您的鼠标和键盘操作</translation>
        </message>
        <message>
            <source>dangerous — asks at every call</source>
            <translation>危险 — 每次调用都会询问</translation>
        </message>
        <message>
            <source>Desktop Agent — allow {tool}?</source>
            <extracomment>when the Allow buttons wake (ARM_S after `open`)</extracomment>
            <translation>Desktop Agent — 允许 {tool}？</translation>
        </message>
        <message>
            <source>Arguments</source>
            <translation>参数</translation>
        </message>
        <message>
            <source>Show the password</source>
            <translation>显示密码</translation>
        </message>
        <message>
            <source>Details</source>
            <translation>详细信息</translation>
        </message>
        <message>
            <source>Show the tool and its arguments as the program sees them</source>
            <translation>显示程序所见的工具及其参数</translation>
        </message>
        <message>
            <source>Tool:</source>
            <translation>工具：</translation>
        </message>
        <message>
            <source>Arguments:</source>
            <translation>参数：</translation>
        </message>
        <message>
            <source>(the model gave no reason)</source>
            <translation>（模型未给出理由）</translation>
        </message>
        <message>
            <source>Reason:</source>
            <translation>理由：</translation>
        </message>
        <message>
            <source>Risk:</source>
            <translation>风险：</translation>
        </message>
        <message>
            <source>Asks every time:</source>
            <translation>每次都询问：</translation>
        </message>
        <message>
            <source>Safety check:</source>
            <translation>安全检查：</translation>
        </message>
        <message>
            <source>On:</source>
            <translation>位置：</translation>
        </message>
        <message>
            <source>monitor {number}, {width}x{height} at {left},{top}</source>
            <translation>显示器 {number}，{width}x{height}，位于 {left},{top}</translation>
        </message>
        <message>
            <source>Allow &amp;once</source>
            <translation>允许一次(&amp;O)</translation>
        </message>
        <message>
            <source>Run this call; ask again next time (Alt+O)</source>
            <translation>执行这次调用；下次再询问（Alt+O）</translation>
        </message>
        <message>
            <source>Allow for this &amp;run</source>
            <translation>本次运行中允许(&amp;R)</translation>
        </message>
        <message>
            <source>Run {tool} without asking for the rest of this run</source>
            <translation>在本次运行的剩余部分中执行 {tool} 不再询问</translation>
        </message>
        <message>
            <source>&amp;Deny</source>
            <translation>拒绝(&amp;D)</translation>
        </message>
        <message>
            <source>Do not run it (Esc)</source>
            <translation>不执行（Esc）</translation>
        </message>
        <message>
            <source>1 more character below: scroll the arguments to read them all</source>
            <translation>下方还有 1 个字符：滚动参数以阅读全部内容</translation>
        </message>
        <message>
            <source>{count} more characters below: scroll the arguments to read them all</source>
            <translation>下方还有 {count} 个字符：滚动参数以阅读全部内容</translation>
        </message>
        <message>
            <source>The screenshot file is missing</source>
            <translation>截图文件不存在</translation>
        </message>
        <message>
            <source>Loading the screenshot…</source>
            <translation>正在加载截图…</translation>
        </message>
        <message>
            <source>Denies by itself in {seconds} s</source>
            <translation>{seconds} 秒后自动拒绝</translation>
        </message>
        <message>
            <source>Allow once: this one action runs now; the agent asks again before its next one.</source>
            <translation>允许一次：立即执行这一个操作；下一个操作之前智能体会再次询问。</translation>
        </message>
        <message>
            <source>Allow for this run: {tool} acts without asking until this run ends.</source>
            <translation>本次运行中允许：在本次运行结束前，{tool} 执行时不再询问。</translation>
        </message>
        <message>
            <source>Deny: nothing happens on your screen; the agent is told and may try another way.</source>
            <translation>拒绝：您的屏幕上不会发生任何事；智能体会得到通知，并可能尝试其他方法。</translation>
        </message>
        <message>
            <source>No answer in time counts as Deny.</source>
            <translation>未及时回答视为拒绝。</translation>
        </message>
    </context>
    <context>
        <name>CalibrationWindow</name>
        <message>
            <source>Calibration stopped: nothing more is asked of the model.</source>
            <extracomment>time for the window manager to map and paint the window before the screenshot what the window says when a stop ended the calibration</extracomment>
            <translation>校准已停止：不再向模型提问。</translation>
        </message>
        <message>
            <source>Desktop Agent — calibration</source>
            <translation>Desktop Agent — 校准</translation>
        </message>
        <message>
            <source>Showing the targets…</source>
            <translation>正在显示目标…</translation>
        </message>
        <message>
            <source>&amp;Save</source>
            <translation>保存(&amp;S)</translation>
        </message>
        <message>
            <source>&amp;Close</source>
            <translation>关闭(&amp;C)</translation>
        </message>
        <message>
            <source>Asking {model} to click {count} targets…</source>
            <translation>正在让 {model} 点击 {count} 个目标…</translation>
        </message>
        <message>
            <source>Calibration failed: {error}</source>
            <translation>校准失败：{error}</translation>
        </message>
        <message>
            <source>&amp;Save model_coordinates = "{space}"</source>
            <translation>保存 model_coordinates = "{space}"(&amp;S)</translation>
        </message>
        <message>
            <source>Saved</source>
            <translation>已保存</translation>
        </message>
    </context>
    <context>
        <name>CloseUp</name>
        <message>
            <source>Whole screen</source>
            <extracomment>the close-up's narrowest width in screenshot px: a 16 px button shows at ~2x in the dialog the room left around the element in the close-up, in screenshot px the close-up's shape: the dialog's picture is about this wide for its height the field a text goes to (or the element acted on), outlined</extracomment>
            <translation>整个屏幕</translation>
        </message>
        <message>
            <source>Show the whole screen instead of the close-up</source>
            <translation>显示整个屏幕而不是特写</translation>
        </message>
        <message>
            <source>Close-up</source>
            <translation>特写</translation>
        </message>
    </context>
    <context>
        <name>HistoryModel</name>
        <message>
            <source>Status</source>
            <translation>状态</translation>
        </message>
        <message>
            <source>Goal</source>
            <translation>目标</translation>
        </message>
        <message>
            <source>Started</source>
            <translation>开始时间</translation>
        </message>
        <message>
            <source>queued</source>
            <extracomment>a run's status as the table shows it (the filter also matches the English word)</extracomment>
            <translation>排队中</translation>
        </message>
        <message>
            <source>running</source>
            <translation>运行中</translation>
        </message>
        <message>
            <source>paused</source>
            <translation>已暂停</translation>
        </message>
        <message>
            <source>completed</source>
            <translation>已完成</translation>
        </message>
        <message>
            <source>failed</source>
            <translation>失败</translation>
        </message>
        <message>
            <source>stopped</source>
            <translation>已停止</translation>
        </message>
        <message>
            <source>interrupted</source>
            <translation>已中断</translation>
        </message>
        <message>
            <source>{count} of {limit} turns</source>
            <translation>{count}/{limit} 轮</translation>
        </message>
        <message>
            <source>id {run}</source>
            <translation>编号 {run}</translation>
        </message>
    </context>
    <context>
        <name>HistoryPanel</name>
        <message>
            <source>Filter runs (status, goal, model)…</source>
            <extracomment>what the filter matches against: status, goal, model and id</extracomment>
            <translation>筛选运行（状态、目标、模型）…</translation>
        </message>
        <message>
            <source>Filter the run history</source>
            <translation>筛选运行历史</translation>
        </message>
        <message>
            <source>Run history</source>
            <translation>运行历史</translation>
        </message>
        <message>
            <source>Save as &amp;routine…</source>
            <translation>另存为例程(&amp;R)…</translation>
        </message>
        <message>
            <source>Run its steps again later without asking the model</source>
            <translation>以后不询问模型即可再次运行这些步骤</translation>
        </message>
    </context>
    <context>
        <name>MainWindow</name>
        <message>
            <source>Error: {error}</source>
            <extracomment>a RunView; declared as object, which Qt passes through as it is, so that the window's module does not import the core's dataclasses before its first paint</extracomment>
            <translation>错误：{error}</translation>
        </message>
        <message>
            <source>No run on show. Type a goal and press Start, or pick a run.</source>
            <translation>没有正在显示的运行。输入目标并按“开始”，或选择一个运行。</translation>
        </message>
        <message>
            <source>Ready.</source>
            <translation>就绪。</translation>
        </message>
        <message>
            <source>The history cannot be read: {error}</source>
            <translation>无法读取历史：{error}</translation>
        </message>
        <message>
            <source>Checking the model…</source>
            <translation>正在检查模型…</translation>
        </message>
        <message>
            <source>&amp;Start</source>
            <translation>开始(&amp;S)</translation>
        </message>
        <message>
            <source>&amp;Pause / Resume</source>
            <translation>暂停 / 继续(&amp;P)</translation>
        </message>
        <message>
            <source>St&amp;op</source>
            <translation>停止(&amp;O)</translation>
        </message>
        <message>
            <source>Stop &amp;all runs</source>
            <translation>停止所有运行(&amp;A)</translation>
        </message>
        <message>
            <source>&amp;Refresh history</source>
            <translation>刷新历史(&amp;R)</translation>
        </message>
        <message>
            <source>&amp;Settings…</source>
            <translation>设置(&amp;S)…</translation>
        </message>
        <message>
            <source>&amp;Find model servers…</source>
            <translation>查找模型服务器(&amp;F)…</translation>
        </message>
        <message>
            <source>&amp;Quit</source>
            <translation>退出(&amp;Q)</translation>
        </message>
        <message>
            <source>&amp;App</source>
            <translation>应用(&amp;A)</translation>
        </message>
        <message>
            <source>&amp;Run</source>
            <translation>运行(&amp;R)</translation>
        </message>
    </context>
    <context>
        <name>ModelServersController</name>
        <message>
            <source>Could not look: {error}</source>
            <translation>无法查找：{error}</translation>
        </message>
        <message>
            <source>Could not set the model: {error}</source>
            <translation>无法设置模型：{error}</translation>
        </message>
    </context>
    <context>
        <name>ModelServersDialog</name>
        <message>
            <source>Windows: this app has not yet run on a real Windows machine. Its Windows parts were tested only against stand-ins of Windows; docs/windows-checklist.md lists what a person checks on Windows 10 or 11. Until then, watch what it does and keep the stop hotkey (Ctrl+Alt+Esc) at hand.</source>
            <extracomment>said on Windows where a first run starts (issue 37 item 10), until a real machine ran the checks of docs/windows-checklist.md</extracomment>
            <translation>Windows：本应用尚未在真实的 Windows 电脑上运行过。它的 Windows 部分只在 Windows 的替身上测试过；docs/windows-checklist.md 列出了需要在 Windows 10 或 11 上由人检查的内容。在此之前，请留意它的操作，并随时准备按停止热键（Ctrl+Alt+Esc）。</translation>
        </message>
        <message>
            <source>Before each action with your mouse or keyboard the agent asks you first. “Allow once” lets that one action run; it asks again before the next. Esc (or Ctrl+Alt+Esc anywhere) stops the run at once.</source>
            <extracomment>what "Allow once" means, said where the first question will come from</extracomment>
            <translation>智能体每次要用你的鼠标或键盘操作之前都会先问你。“允许一次”只让这一次操作运行；下一次之前它会再问。按 Esc（或在任何地方按 Ctrl+Alt+Esc）立即停止运行。</translation>
        </message>
        <message>
            <source>✓ sees</source>
            <translation>✓ 能看图</translation>
        </message>
        <message>
            <source>✗ no vision</source>
            <translation>✗ 不能看图</translation>
        </message>
        <message>
            <source>? unknown</source>
            <translation>? 未知</translation>
        </message>
        <message>
            <source>Stopped. Press Check again to look again.</source>
            <extracomment>what the finder says when a stop gave its look up</extracomment>
            <translation>已停止。按“重新检查”再找一次。</translation>
        </message>
        <message>
            <source>Desktop Agent — model servers</source>
            <translation>Desktop Agent — 模型服务器</translation>
        </message>
        <message>
            <source>Desktop Agent needs a model that can see screenshots. It looks for model servers on this computer only, and sends them no key.</source>
            <translation>Desktop Agent 需要一个能看懂截图的模型。它只在本机上查找模型服务器，且不向它们发送任何密钥。</translation>
        </message>
        <message>
            <source>Check &amp;again</source>
            <translation>重新检查(&amp;A)</translation>
        </message>
        <message>
            <source>&amp;Use this model</source>
            <translation>使用此模型(&amp;U)</translation>
        </message>
        <message>
            <source>Close</source>
            <translation>关闭</translation>
        </message>
        <message>
            <source>Looking for model servers on this computer…</source>
            <extracomment>on Windows: nothing of it has run on a real Windows machine (None elsewhere)</extracomment>
            <translation>正在本机上查找模型服务器…</translation>
        </message>
        <message>
            <source>Model</source>
            <translation>模型</translation>
        </message>
        <message>
            <source>Can see</source>
            <translation>能看图</translation>
        </message>
        <message>
            <source>Profile</source>
            <translation>配置文件</translation>
        </message>
        <message>
            <source>Model servers and their models</source>
            <translation>模型服务器及其模型</translation>
        </message>
        <message>
            <source>&lt;b&gt;No model server answers on this computer.&lt;/b&gt; Ways to get one:</source>
            <translation>&lt;b&gt;本机上没有模型服务器应答。&lt;/b&gt;获取方法：</translation>
        </message>
        <message>
            <source>Then press Check again.</source>
            <translation>然后按“重新检查”。</translation>
        </message>
        <message>
            <source>command: {command}</source>
            <translation>命令：{command}</translation>
        </message>
        <message>
            <source>Copy</source>
            <translation>复制</translation>
        </message>
        <message>
            <source>Copy this command</source>
            <translation>复制此命令</translation>
        </message>
        <message>
            <source>&lt;b&gt;A first task to try&lt;/b&gt; — on a harmless app, the text editor:</source>
            <translation>&lt;b&gt;试试第一个任务&lt;/b&gt; — 在一个无害的应用（文本编辑器）上：</translation>
        </message>
        <message>
            <source>First task</source>
            <translation>第一个任务</translation>
        </message>
        <message>
            <source>Put it in the &amp;goal box</source>
            <translation>放入目标框(&amp;G)</translation>
        </message>
        <message>
            <source>Looking for model servers on this computer (ports {ports})…</source>
            <translation>正在本机上查找模型服务器（端口 {ports}）…</translation>
        </message>
        <message>
            <source>(no chat model loaded)</source>
            <translation>（未加载对话模型）</translation>
        </message>
        <message>
            <source>✓ sees: the server says it takes images (or it is a known vision model). </source>
            <translation>✓ 能看图：服务器表示它接受图像（或它是已知的视觉模型）。</translation>
        </message>
        <message>
            <source>Pick one and press Use this model.</source>
            <translation>选择一个，然后按“使用此模型”。</translation>
        </message>
        <message>
            <source>Now using {model} at {url}.</source>
            <translation>现在使用 {url} 上的 {model}。</translation>
        </message>
        <message>
            <source>Copied</source>
            <translation>已复制</translation>
        </message>
    </context>
    <context>
        <name>RoutineGrantsPage</name>
        <message>
            <source>Tools a routine may use without asking in its own runs (given when it was saved). A stop-all revokes them for the run going on; calls that ask every time still ask.</source>
            <translation>例程在自己的运行中可以不经询问使用的工具（在保存时授予）。“全部停止”会为正在进行的运行撤销它们；每次都要询问的调用仍会询问。</translation>
        </message>
        <message>
            <source>Routine grants</source>
            <translation>例程授权</translation>
        </message>
        <message>
            <source>&amp;Revoke the selected routine's grants</source>
            <translation>撤销所选例程的授权(&amp;R)</translation>
        </message>
        <message>
            <source>No routine has grants.</source>
            <translation>没有例程拥有授权。</translation>
        </message>
    </context>
    <context>
        <name>RoutinesController</name>
        <message>
            <source>Routines not read: {error}</source>
            <translation>未能读取例程：{error}</translation>
        </message>
        <message>
            <source>Routine {name}: {status}. {message}</source>
            <translation>例程 {name}：{status}。{message}</translation>
        </message>
        <message>
            <source>Starting routine {name}…</source>
            <translation>正在启动例程 {name}…</translation>
        </message>
        <message>
            <source>A run is on show: stop it or let it end first.</source>
            <translation>正在显示一个运行：请先停止它或等它结束。</translation>
        </message>
        <message>
            <source>Running routine {name}: no model is asked while the screen matches.</source>
            <translation>正在运行例程 {name}：屏幕相符时不询问模型。</translation>
        </message>
        <message>
            <source>Not saved: {error}</source>
            <translation>未保存：{error}</translation>
        </message>
        <message>
            <source>Saved routine {name} ({count} steps).</source>
            <translation>已保存例程 {name}（{count} 个步骤）。</translation>
        </message>
    </context>
    <context>
        <name>RoutinesPanel</name>
        <message>
            <source>&lt;b&gt;Routines&lt;/b&gt;</source>
            <translation>&lt;b&gt;例程&lt;/b&gt;</translation>
        </message>
        <message>
            <source>Saved routines</source>
            <translation>已保存的例程</translation>
        </message>
        <message>
            <source>Parameters</source>
            <translation>参数</translation>
        </message>
        <message>
            <source>&amp;Run routine</source>
            <translation>运行例程(&amp;R)</translation>
        </message>
        <message>
            <source>Run the selected routine: no model is asked while the screen matches</source>
            <translation>运行所选例程：屏幕相符时不询问模型</translation>
        </message>
        <message>
            <source>Save a completed run as a routine: right-click it in the history.</source>
            <translation>要把已完成的运行保存为例程：在历史中右键单击它。</translation>
        </message>
        <message>
            <source>weekdays</source>
            <translation>工作日</translation>
        </message>
        <message>
            <source>daily</source>
            <translation>每天</translation>
        </message>
        <message>
            <source>{name} — {count} steps</source>
            <translation>{name} — {count} 个步骤</translation>
        </message>
        <message>
            <source>parameter {name}</source>
            <translation>参数 {name}</translation>
        </message>
        <message>
            <source>a password field's text: asked each run, never saved</source>
            <translation>密码框的文本：每次运行时询问，从不保存</translation>
        </message>
        <message>
            <source>Type {names} first: it is never saved.</source>
            <translation>请先输入 {names}：它从不保存。</translation>
        </message>
    </context>
    <context>
        <name>RunStatusBar</name>
        <message>
            <source>Turn {turn} of {limit}</source>
            <translation>第 {turn}/{limit} 轮</translation>
        </message>
        <message>
            <source>Injection guard off</source>
            <extracomment>the status bar's warning while the setting injection_guard is off</extracomment>
            <translation>注入防护已关闭</translation>
        </message>
        <message>
            <source>Text on the screen that gives orders to an AI is not asked about: under a blanket approval the model may act on it unasked. Turn it on in settings.toml (injection_guard = "on").</source>
            <translation>屏幕上向 AI 下命令的文字不会被询问：在全面批准下，模型可能会不经询问就照做。请在 settings.toml 中开启它（injection_guard = "on"）。</translation>
        </message>
        <message>
            <source>Opening the history…</source>
            <translation>正在打开历史…</translation>
        </message>
        <message>
            <source>Stop hotkey not armed: {why}</source>
            <translation>停止热键未启用：{why}</translation>
        </message>
    </context>
    <context>
        <name>SaveRoutineDialog</name>
        <message>
            <source>Save as routine</source>
            <translation>另存为例程</translation>
        </message>
        <message>
            <source>e.g. export-report</source>
            <translation>例如 export-report</translation>
        </message>
        <message>
            <source>routine name</source>
            <translation>例程名称</translation>
        </message>
        <message>
            <source>&amp;Name:</source>
            <translation>名称(&amp;N)：</translation>
        </message>
        <message>
            <source>a password field</source>
            <translation>密码框</translation>
        </message>
        <message>
            <source>not stored</source>
            <translation>未存储</translation>
        </message>
        <message>
            <source>{hidden} (asked at each run, never saved)</source>
            <translation>{hidden}（每次运行时询问，从不保存）</translation>
        </message>
        <message>
            <source>turn {index}: {text}</source>
            <translation>第 {index} 轮：{text}</translation>
        </message>
        <message>
            <source>parameter name of turn {index}</source>
            <translation>第 {index} 轮的参数名</translation>
        </message>
        <message>
            <source>allow {tool} without asking in this routine's runs</source>
            <translation>在此例程的运行中不经询问允许 {tool}</translation>
        </message>
        <message>
            <source>The action steps of run {run} that ran ok ({count}) are replayed, each checked.</source>
            <translation>运行 {run} 中成功执行的操作步骤（{count} 个）将被重放，每一步都会检查。</translation>
        </message>
        <message>
            <source>Name: 1-64 letters, digits, '.', '_' or '-'.</source>
            <translation>名称：1-64 个字母、数字、“.”、“_”或“-”。</translation>
        </message>
        <message>
            <source>Parameter name {name}: letters, digits, '_' or '-'.</source>
            <translation>参数名 {name}：字母、数字、“_”或“-”。</translation>
        </message>
    </context>
    <context>
        <name>ScreenshotView</name>
        <message>
            <source>No screenshot</source>
            <extracomment>the marker's colour: red with a white halo reads on light and dark screens alike a grounding's first guess (grey ring) and the crop it looked at (dashed blue frame)</extracomment>
            <translation>没有截图</translation>
        </message>
        <message>
            <source>Screenshot</source>
            <translation>截图</translation>
        </message>
        <message>
            <source>screenshot with the target at {x}, {y}</source>
            <translation>截图，目标位于 {x}, {y}</translation>
        </message>
        <message>
            <source>screenshot</source>
            <translation>截图</translation>
        </message>
        <message>
            <source>, first aimed at {x}, {y}</source>
            <translation>，最初瞄准 {x}, {y}</translation>
        </message>
    </context>
    <context>
        <name>SettingsDialog</name>
        <message>
            <source>As the profile says</source>
            <extracomment>runs a calibration for these settings; the coordinate space it suggests saving, or None opens a finder of the model servers on this machine over the dialog; the (server, model) chosen there (core.model_servers.FoundServer / FoundModel), or None (name, note) of a model profile (the host's `model_profiles()`)</extracomment>
            <translation>按配置文件</translation>
        </message>
        <message>
            <source>Screenshot pixels</source>
            <translation>截图像素</translation>
        </message>
        <message>
            <source>0–1000</source>
            <translation>0–1000</translation>
        </message>
        <message>
            <source>Pixels of the model's resized image</source>
            <translation>模型缩放后图像的像素</translation>
        </message>
        <message>
            <source>safe</source>
            <extracomment>spin boxes take any number: the Settings model says what is in range, inline</extracomment>
            <translation>安全</translation>
        </message>
        <message>
            <source>uses mouse or keyboard</source>
            <translation>使用鼠标或键盘</translation>
        </message>
        <message>
            <source>dangerous: asks at every call</source>
            <translation>危险：每次调用都询问</translation>
        </message>
        <message>
            <source>Allow</source>
            <translation>允许</translation>
        </message>
        <message>
            <source>Ask</source>
            <translation>询问</translation>
        </message>
        <message>
            <source>Deny</source>
            <translation>拒绝</translation>
        </message>
        <message>
            <source>Auto (the model profile's default)</source>
            <translation>自动（模型配置文件的默认值）</translation>
        </message>
        <message>
            <source>Off: click where the model says</source>
            <translation>关闭：点击模型指出的位置</translation>
        </message>
        <message>
            <source>Zoom: ask the model again on a crop around its point</source>
            <translation>放大：在该点周围的裁剪图上再问一次模型</translation>
        </message>
        <message>
            <source>Grounding model: it finds the target, then zooms</source>
            <translation>定位模型：由它找到目标，再放大</translation>
        </message>
        <message>
            <source>Tool policies</source>
            <translation>工具策略</translation>
        </message>
        <message>
            <source>Desktop Agent — settings</source>
            <translation>Desktop Agent — 设置</translation>
        </message>
        <message>
            <source>&amp;Model</source>
            <translation>模型(&amp;M)</translation>
        </message>
        <message>
            <source>&amp;Grounding</source>
            <translation>定位(&amp;G)</translation>
        </message>
        <message>
            <source>&amp;Limits</source>
            <translation>限制(&amp;L)</translation>
        </message>
        <message>
            <source>&amp;Tools</source>
            <translation>工具(&amp;T)</translation>
        </message>
        <message>
            <source>&amp;Desktop</source>
            <translation>桌面(&amp;D)</translation>
        </message>
        <message>
            <source>&amp;Routines</source>
            <translation>例程(&amp;R)</translation>
        </message>
        <message>
            <source>Custom</source>
            <translation>自定义</translation>
        </message>
        <message>
            <source>&amp;Provider:</source>
            <translation>提供方(&amp;P)：</translation>
        </message>
        <message>
            <source>&amp;Base URL:</source>
            <translation>基础 URL(&amp;B)：</translation>
        </message>
        <message>
            <source>M&amp;odel:</source>
            <translation>模型(&amp;O)：</translation>
        </message>
        <message>
            <source>leave empty to keep the stored key</source>
            <translation>留空则保留已存的密钥</translation>
        </message>
        <message>
            <source>API key</source>
            <translation>API 密钥</translation>
        </message>
        <message>
            <source>API &amp;key:</source>
            <translation>API 密钥(&amp;K)：</translation>
        </message>
        <message>
            <source>Kept in the OS keyring, never in the settings file.</source>
            <translation>保存在系统密钥环中，从不写入设置文件。</translation>
        </message>
        <message>
            <source>Key &amp;variable:</source>
            <translation>密钥变量(&amp;V)：</translation>
        </message>
        <message>
            <source>Model can &amp;see:</source>
            <translation>模型能看图(&amp;S)：</translation>
        </message>
        <message>
            <source>Test co&amp;nnection</source>
            <translation>测试连接(&amp;N)</translation>
        </message>
        <message>
            <source>&amp;Find model servers…</source>
            <translation>查找模型服务器(&amp;F)…</translation>
        </message>
        <message>
            <source>Look for model servers on this computer (Ollama, LM Studio, llama.cpp, vLLM, Jan, LocalAI) and pick a model</source>
            <translation>查找本机上的模型服务器（Ollama、LM Studio、llama.cpp、vLLM、Jan、LocalAI）并选择一个模型</translation>
        </message>
        <message>
            <source>Model pro&amp;file:</source>
            <translation>模型配置文件(&amp;F)：</translation>
        </message>
        <message>
            <source>Model coor&amp;dinates:</source>
            <translation>模型坐标(&amp;D)：</translation>
        </message>
        <message>
            <source>Cal&amp;ibrate…</source>
            <translation>校准(&amp;I)…</translation>
        </message>
        <message>
            <source>Shows targets on the screen and asks the model to click each: finds the coordinates the model answers in</source>
            <translation>在屏幕上显示若干目标并让模型逐一点击：找出模型回答所用的坐标</translation>
        </message>
        <message>
            <source>Auto (by the model name)</source>
            <translation>自动（按模型名称）</translation>
        </message>
        <message>
            <source>&amp;Refine clicks:</source>
            <translation>精确点击(&amp;R)：</translation>
        </message>
        <message>
            <source>empty: the model's server</source>
            <translation>留空：使用模型的服务器</translation>
        </message>
        <message>
            <source>Grounding model's &amp;URL:</source>
            <translation>定位模型的 URL(&amp;U)：</translation>
        </message>
        <message>
            <source>e.g. Salesforce/GTA1-7B, Hcompany/Holo2-8B, ui-tars-1.5-7b</source>
            <translation>例如 Salesforce/GTA1-7B、Hcompany/Holo2-8B、ui-tars-1.5-7b</translation>
        </message>
        <message>
            <source>Grounding &amp;model:</source>
            <translation>定位模型(&amp;M)：</translation>
        </message>
        <message>
            <source>Grounding model's pro&amp;file:</source>
            <translation>定位模型的配置文件(&amp;F)：</translation>
        </message>
        <message>
            <source>Then look again on a crop around its point</source>
            <translation>然后在该点周围的裁剪图上再看一次</translation>
        </message>
        <message>
            <source>&amp;Zoom:</source>
            <translation>放大(&amp;Z)：</translation>
        </message>
        <message>
            <source>Draw the element list's boxes and ids on the screenshot</source>
            <translation>在截图上画出元素列表的方框和编号</translation>
        </message>
        <message>
            <source>&amp;Set-of-mark:</source>
            <translation>标记集(&amp;S)：</translation>
        </message>
        <message>
            <source>Max &amp;steps per run:</source>
            <translation>每次运行最多步骤数(&amp;S)：</translation>
        </message>
        <message>
            <source>Max consecutive &amp;failures:</source>
            <translation>最多连续失败次数(&amp;F)：</translation>
        </message>
        <message>
            <source>&amp;Approval timeout:</source>
            <translation>批准超时(&amp;A)：</translation>
        </message>
        <message>
            <source>Model &amp;reply timeout:</source>
            <translation>模型回复超时(&amp;R)：</translation>
        </message>
        <message>
            <source>Allow runs a tool without asking; Ask opens the approval dialog.</source>
            <translation>“允许”不询问即运行工具；“询问”会打开批准对话框。</translation>
        </message>
        <message>
            <source>A change applies to the next run; a run going on keeps the policies it started with.</source>
            <translation>更改从下一次运行起生效；正在进行的运行沿用开始时的策略。</translation>
        </message>
        <message>
            <source>policy of {tool}</source>
            <translation>{tool} 的策略</translation>
        </message>
        <message>
            <source>e.g. ctrl+alt+esc</source>
            <translation>例如 ctrl+alt+esc</translation>
        </message>
        <message>
            <source>Stop &amp;hotkey:</source>
            <translation>停止热键(&amp;H)：</translation>
        </message>
        <message>
            <source>Screenshot &amp;width:</source>
            <translation>截图宽度(&amp;W)：</translation>
        </message>
        <message>
            <source>JPEG (small, fast)</source>
            <translation>JPEG（小，快）</translation>
        </message>
        <message>
            <source>PNG (exact, larger)</source>
            <translation>PNG（精确，较大）</translation>
        </message>
        <message>
            <source>Screenshot &amp;format:</source>
            <translation>截图格式(&amp;F)：</translation>
        </message>
        <message>
            <source>The active window's (auto)</source>
            <translation>活动窗口所在的（自动）</translation>
        </message>
        <message>
            <source>All monitors as one image</source>
            <translation>所有显示器合成一张图</translation>
        </message>
        <message>
            <source>The primary monitor</source>
            <translation>主显示器</translation>
        </message>
        <message>
            <source>Monitor {number}</source>
            <translation>显示器 {number}</translation>
        </message>
        <message>
            <source>&amp;Monitor shown:</source>
            <translation>显示的显示器(&amp;M)：</translation>
        </message>
        <message>
            <source>Minimise the window while a run acts</source>
            <translation>运行操作时最小化窗口</translation>
        </message>
        <message>
            <source>While &amp;acting:</source>
            <translation>操作时(&amp;A)：</translation>
        </message>
        <message>
            <source>System language</source>
            <translation>系统语言</translation>
        </message>
        <message>
            <source>Takes effect when the app starts again</source>
            <translation>重新启动应用后生效</translation>
        </message>
        <message>
            <source>&amp;Language:</source>
            <translation>语言(&amp;L)：</translation>
        </message>
        <message>
            <source>cannot test here: asyncio is not running on the Qt loop</source>
            <translation>无法在此测试：asyncio 未在 Qt 事件循环上运行</translation>
        </message>
        <message>
            <source>Testing…</source>
            <translation>正在测试…</translation>
        </message>
        <message>
            <source>cannot calibrate here: asyncio is not running</source>
            <translation>无法在此校准：asyncio 未运行</translation>
        </message>
        <message>
            <source>Calibrating…</source>
            <translation>正在校准…</translation>
        </message>
        <message>
            <source>calibration stopped</source>
            <translation>校准已停止</translation>
        </message>
        <message>
            <source>failed: {error}</source>
            <translation>失败：{error}</translation>
        </message>
        <message>
            <source>the model answers in {space} coordinates</source>
            <translation>模型以 {space} 坐标回答</translation>
        </message>
        <message>
            <source>calibration done; nothing to change</source>
            <translation>校准完成；无需更改</translation>
        </message>
        <message>
            <source>cannot store the key: asyncio is not running on the Qt loop</source>
            <translation>无法保存密钥：asyncio 未在 Qt 事件循环上运行</translation>
        </message>
        <message>
            <source>Storing the API key in the OS keyring…</source>
            <translation>正在把 API 密钥存入系统密钥环…</translation>
        </message>
        <message>
            <source>The API key is stored in the OS keyring.</source>
            <translation>API 密钥已存入系统密钥环。</translation>
        </message>
        <message>
            <source>Close</source>
            <translation>关闭</translation>
        </message>
        <message>
            <source>Any OpenAI-compatible server.</source>
            <translation>任何兼容 OpenAI 的服务器。</translation>
        </message>
    </context>
    <context>
        <name>StepDetail</name>
        <message>
            <source>Select a step to see its screenshot</source>
            <translation>选择一个步骤以查看其截图</translation>
        </message>
        <message>
            <source>Step</source>
            <translation>步骤</translation>
        </message>
        <message>
            <source>Action</source>
            <translation>操作</translation>
        </message>
        <message>
            <source>Status</source>
            <translation>状态</translation>
        </message>
        <message>
            <source>Arguments</source>
            <translation>参数</translation>
        </message>
        <message>
            <source>Model's reason</source>
            <translation>模型的理由</translation>
        </message>
        <message>
            <source>Result</source>
            <translation>结果</translation>
        </message>
        <message>
            <source>Timing</source>
            <translation>用时</translation>
        </message>
        <message>
            <source>{title}:</source>
            <translation>{title}：</translation>
        </message>
        <message>
            <source>Turn {index} · {what}</source>
            <translation>第 {index} 轮 · {what}</translation>
        </message>
        <message>
            <source>Error: {error}</source>
            <translation>错误：{error}</translation>
        </message>
        <message>
            <source>running…</source>
            <translation>运行中…</translation>
        </message>
        <message>
            <source>No screenshot for this step</source>
            <translation>此步骤没有截图</translation>
        </message>
        <message>
            <source>The screenshot file is missing</source>
            <translation>截图文件不存在</translation>
        </message>
        <message>
            <source>Loading the screenshot…</source>
            <translation>正在加载截图…</translation>
        </message>
    </context>
    <context>
        <name>TaskPanel</name>
        <message>
            <source>Goal</source>
            <translation>目标</translation>
        </message>
        <message>
            <source>What should be done? e.g. Open the text editor, write “hello”, and save it as ~/hello.txt</source>
            <translation>要做什么？例如：打开文本编辑器，写下“hello”，并保存为 ~/hello.txt</translation>
        </message>
        <message>
            <source>Model: …</source>
            <translation>模型：…</translation>
        </message>
        <message>
            <source>Maximum number of turns</source>
            <translation>最大轮数</translation>
        </message>
        <message>
            <source>Allowed tools</source>
            <translation>允许的工具</translation>
        </message>
        <message>
            <source>&amp;Start</source>
            <translation>开始(&amp;S)</translation>
        </message>
        <message>
            <source>Start the task (Ctrl+Return)</source>
            <translation>开始任务（Ctrl+Return）</translation>
        </message>
        <message>
            <source>&amp;Pause</source>
            <translation>暂停(&amp;P)</translation>
        </message>
        <message>
            <source>Pause or resume the run (Ctrl+P)</source>
            <translation>暂停或继续运行（Ctrl+P）</translation>
        </message>
        <message>
            <source>St&amp;op</source>
            <translation>停止(&amp;O)</translation>
        </message>
        <message>
            <source>Stop the run (Esc or Ctrl+.)</source>
            <translation>停止运行（Esc 或 Ctrl+.）</translation>
        </message>
        <message>
            <source>Stop &amp;all</source>
            <translation>全部停止(&amp;A)</translation>
        </message>
        <message>
            <source>Stop every run of this app and of any `desktop-agent run` on this data dir</source>
            <translation>停止本应用以及此数据目录上所有 `desktop-agent run` 的每个运行</translation>
        </message>
        <message>
            <source>Max turns:</source>
            <translation>最大轮数：</translation>
        </message>
        <message>
            <source>Allowed tools:</source>
            <translation>允许的工具：</translation>
        </message>
        <message>
            <source>&amp;Resume</source>
            <translation>继续(&amp;R)</translation>
        </message>
        <message>
            <source>Model: {model} at {url}</source>
            <translation>模型：{model}，位于 {url}</translation>
        </message>
        <message>
            <source>Checking whether the model can see…</source>
            <translation>正在检查模型能否看图…</translation>
        </message>
        <message>
            <source>✓ can see screenshots</source>
            <translation>✓ 能看懂截图</translation>
        </message>
        <message>
            <source>✗ cannot see screenshots: </source>
            <translation>✗ 看不懂截图：</translation>
        </message>
        <message>
            <source>no vision</source>
            <translation>不支持视觉</translation>
        </message>
        <message>
            <source>? vision not checked</source>
            <translation>? 尚未检查视觉能力</translation>
        </message>
        <message>
            <source>No model server at {address}</source>
            <translation>{address} 上没有模型服务器</translation>
        </message>
        <message>
            <source>No model {model} at {address}</source>
            <translation>{address} 上没有模型 {model}</translation>
        </message>
        <message>
            <source>Type a goal first.</source>
            <translation>请先输入目标。</translation>
        </message>
        <message>
            <source>Allow at least one tool.</source>
            <translation>请至少允许一个工具。</translation>
        </message>
        <message>
            <source>model checks are off</source>
            <translation>模型检查已关闭</translation>
        </message>
        <message>
            <source>stopped</source>
            <translation>已停止</translation>
        </message>
    </context>
    <context>
        <name>TimelineModel</name>
        <message>
            <source>Turn</source>
            <extracomment>the roles the timeline answers, as plain ints (a set lookup, no enum work per call)</extracomment>
            <translation>轮次</translation>
        </message>
        <message>
            <source>Kind</source>
            <translation>类型</translation>
        </message>
        <message>
            <source>Action</source>
            <translation>操作</translation>
        </message>
        <message>
            <source>Result</source>
            <translation>结果</translation>
        </message>
        <message>
            <source>Time</source>
            <translation>用时</translation>
        </message>
        <message>
            <source>Screen</source>
            <translation>屏幕</translation>
        </message>
        <message>
            <source>Status</source>
            <translation>状态</translation>
        </message>
    </context>
    <context>
        <name>TimelineView</name>
        <message>
            <source>Step timeline</source>
            <translation>步骤时间线</translation>
        </message>
    </context>
    <context>
        <name>TrayController</name>
        <message>
            <source>Desktop Agent — idle</source>
            <extracomment>state → fill colour of the tray's icons (the tray's own: the window's first frame shows none)</extracomment>
            <translation>Desktop Agent — 空闲</translation>
        </message>
        <message>
            <source>Desktop Agent — running</source>
            <translation>Desktop Agent — 运行中</translation>
        </message>
        <message>
            <source>Desktop Agent — paused</source>
            <translation>Desktop Agent — 已暂停</translation>
        </message>
        <message>
            <source>Desktop Agent — the last run failed</source>
            <translation>Desktop Agent — 上次运行失败</translation>
        </message>
        <message>
            <source>&amp;Show Desktop Agent</source>
            <translation>显示 Desktop Agent(&amp;S)</translation>
        </message>
        <message>
            <source>&amp;Pause</source>
            <translation>暂停(&amp;P)</translation>
        </message>
        <message>
            <source>S&amp;top all runs</source>
            <translation>停止所有运行(&amp;T)</translation>
        </message>
        <message>
            <source>&amp;Quit</source>
            <translation>退出(&amp;Q)</translation>
        </message>
        <message>
            <source>Stop hotkey not armed: {why}</source>
            <translation>停止热键未启用：{why}</translation>
        </message>
        <message>
            <source>&amp;Resume</source>
            <translation>继续(&amp;R)</translation>
        </message>
    </context>
    <context>
        <name>Sentence</name>
        <message>
            <source>Use the tool {tool} with {args}</source>
            <translation>使用工具 {tool}，参数为 {args}</translation>
        </message>
        <message>
            <source>button</source>
            <translation>按钮</translation>
        </message>
        <message>
            <source>toggle button</source>
            <translation>切换按钮</translation>
        </message>
        <message>
            <source>check box</source>
            <translation>复选框</translation>
        </message>
        <message>
            <source>option button</source>
            <translation>单选按钮</translation>
        </message>
        <message>
            <source>menu</source>
            <translation>菜单</translation>
        </message>
        <message>
            <source>menu item</source>
            <translation>菜单项</translation>
        </message>
        <message>
            <source>text field</source>
            <translation>文本框</translation>
        </message>
        <message>
            <source>password field</source>
            <translation>密码框</translation>
        </message>
        <message>
            <source>terminal</source>
            <translation>终端</translation>
        </message>
        <message>
            <source>drop-down list</source>
            <translation>下拉列表</translation>
        </message>
        <message>
            <source>list item</source>
            <translation>列表项</translation>
        </message>
        <message>
            <source>cell</source>
            <translation>单元格</translation>
        </message>
        <message>
            <source>tree item</source>
            <translation>树节点</translation>
        </message>
        <message>
            <source>tab</source>
            <translation>标签页</translation>
        </message>
        <message>
            <source>link</source>
            <translation>链接</translation>
        </message>
        <message>
            <source>slider</source>
            <translation>滑块</translation>
        </message>
        <message>
            <source>number field</source>
            <translation>数字框</translation>
        </message>
        <message>
            <source>window</source>
            <translation>窗口</translation>
        </message>
        <message>
            <source>Click {target}</source>
            <translation>单击{target}</translation>
        </message>
        <message>
            <source>Double-click {target}</source>
            <translation>双击{target}</translation>
        </message>
        <message>
            <source>Triple-click {target}</source>
            <translation>三击{target}</translation>
        </message>
        <message>
            <source>Right-click {target}</source>
            <translation>右键单击{target}</translation>
        </message>
        <message>
            <source>Double-click with the right button on {target}</source>
            <translation>用右键双击{target}</translation>
        </message>
        <message>
            <source>Triple-click with the right button on {target}</source>
            <translation>用右键三击{target}</translation>
        </message>
        <message>
            <source>Middle-click {target}</source>
            <translation>中键单击{target}</translation>
        </message>
        <message>
            <source>Double-click with the middle button on {target}</source>
            <translation>用中键双击{target}</translation>
        </message>
        <message>
            <source>Triple-click with the middle button on {target}</source>
            <translation>用中键三击{target}</translation>
        </message>
        <message>
            <source>“{text}…” ({count} more characters)</source>
            <translation>“{text}…”（另有 {count} 个字符）</translation>
        </message>
        <message>
            <source>element of kind {role}</source>
            <translation>类型为 {role} 的元素</translation>
        </message>
        <message>
            <source>the {noun}</source>
            <translation>{noun}</translation>
        </message>
        <message>
            <source>where the pointer is</source>
            <translation>鼠标指针所在处</translation>
        </message>
        <message>
            <source>{count} seconds</source>
            <translation>{count} 秒</translation>
        </message>
        <message>
            <source>Move the pointer to {target}</source>
            <translation>将鼠标指针移到{target}</translation>
        </message>
        <message>
            <source>Drag from {start} to {end}</source>
            <translation>从{start}拖动到{end}</translation>
        </message>
        <message>
            <source>{action}, passing 1 point on the way</source>
            <translation>{action}，途经 1 个点</translation>
        </message>
        <message>
            <source>Scroll up 1 notch</source>
            <translation>向上滚动 1 格</translation>
        </message>
        <message>
            <source>Scroll up {count} notches</source>
            <translation>向上滚动 {count} 格</translation>
        </message>
        <message>
            <source>Press {keys}</source>
            <translation>按 {keys}</translation>
        </message>
        <message>
            <source>Press {keys} in {window}</source>
            <translation>在{window}中按 {keys}</translation>
        </message>
        <message>
            <source>Hold {keys} down for {seconds}</source>
            <translation>按住 {keys} {seconds}</translation>
        </message>
        <message>
            <source>Hold {keys} down for {seconds} in {window}</source>
            <translation>在{window}中按住 {keys} {seconds}</translation>
        </message>
        <message>
            <source>Press and hold the left mouse button on {target}</source>
            <translation>在{target}上按住鼠标左键</translation>
        </message>
        <message>
            <source>Let go of the left mouse button on {target}</source>
            <translation>在{target}上松开鼠标左键</translation>
        </message>
        <message>
            <source>Start the program {command}</source>
            <translation>启动程序{command}</translation>
        </message>
        <message>
            <source>Wait {seconds}</source>
            <translation>等待 {seconds}</translation>
        </message>
        <message>
            <source>Bring {target} to the front</source>
            <translation>将{target}切换到前台</translation>
        </message>
        <message>
            <source>Press {target}</source>
            <translation>按下{target}</translation>
        </message>
        <message>
            <source>Set {target} to {value}</source>
            <translation>将{target}设为{value}</translation>
        </message>
        <message>
            <source>Take a screenshot</source>
            <translation>截取屏幕</translation>
        </message>
        <message>
            <source>Find out where the mouse pointer is</source>
            <translation>查看鼠标指针的位置</translation>
        </message>
        <message>
            <source>“{text}”</source>
            <translation>“{text}”</translation>
        </message>
        <message>
            <source>“{text}…” (1 more character)</source>
            <translation>“{text}…”（另有 1 个字符）</translation>
        </message>
        <message>
            <source>the window {window}</source>
            <translation>窗口{window}</translation>
        </message>
        <message>
            <source>the {noun} {name} in {window}</source>
            <translation>{window}中的{noun}{name}</translation>
        </message>
        <message>
            <source>the {noun} {name}</source>
            <translation>{noun}{name}</translation>
        </message>
        <message>
            <source>the {noun} of {window}</source>
            <translation>{window}的{noun}</translation>
        </message>
        <message>
            <source>the point ({x}, {y}) of the screenshot</source>
            <translation>截图上的点 ({x}, {y})</translation>
        </message>
        <message>
            <source>{action} (the model says it aims at {target})</source>
            <translation>{action}（模型称目标是{target}）</translation>
        </message>
        <message>
            <source>{action} while holding {keys}</source>
            <translation>按住 {keys} 的同时{action}</translation>
        </message>
        <message>
            <source>{count} second</source>
            <translation>{count} 秒</translation>
        </message>
        <message>
            <source>{action}, passing {count} points on the way</source>
            <translation>{action}，途经 {count} 个点</translation>
        </message>
        <message>
            <source>Scroll down 1 notch</source>
            <translation>向下滚动 1 格</translation>
        </message>
        <message>
            <source>Scroll down {count} notches</source>
            <translation>向下滚动 {count} 格</translation>
        </message>
        <message>
            <source>Scroll by 0 notches</source>
            <translation>滚动 0 格</translation>
        </message>
        <message>
            <source>{action} over {target}</source>
            <translation>在{target}上{action}</translation>
        </message>
        <message>
            <source>{action} where the pointer is</source>
            <translation>在鼠标指针所在处{action}</translation>
        </message>
        <message>
            <source>text kept hidden (•••)</source>
            <translation>隐藏的文本（•••）</translation>
        </message>
        <message>
            <source>Type {text} where the keyboard focus is</source>
            <translation>在键盘焦点处输入{text}</translation>
        </message>
        <message>
            <source>Type {text} into {target}</source>
            <translation>在{target}中输入{text}</translation>
        </message>
        <message>
            <source>{action}, then press Enter</source>
            <translation>{action}，然后按 Enter</translation>
        </message>
        <message>
            <source>Bring the window {title} to the front</source>
            <translation>将窗口{title}切换到前台</translation>
        </message>
        <message>
            <source>Empty {target}</source>
            <translation>清空{target}</translation>
        </message>
        <message>
            <source>the element {id} of the list</source>
            <translation>列表中的元素 {id}</translation>
        </message>
    </context>
    <context>
        <name>CLI</name>
        <message>
            <source>stopped {count} run(s)</source>
            <translation>已停止 {count} 个运行</translation>
        </message>
        <message>
            <source>{said}: text in notifications and images is not read by the injection guard</source>
            <translation>{said}：通知和图片里的文字不会被注入防护读取</translation>
        </message>
        <message>
            <source>set the API key in Settings (kept in the keyring) or in the OPENAI_API_KEY variable</source>
            <translation>在设置中填写 API 密钥（保存在密钥环中），或设置 OPENAI_API_KEY 环境变量</translation>
        </message>
        <message>
            <source>accepted ({request})</source>
            <translation>已接受（{request}）</translation>
        </message>
        <message>
            <source>{count} turns</source>
            <translation>{count} 轮</translation>
        </message>
        <message>
            <source>the injection guard is off: text on the screen that gives orders to an AI is not asked about, and under a blanket approval the model may act on it unasked</source>
            <translation>注入防护已关闭：屏幕上向 AI 下达指令的文字不会被询问；在全部批准之下，模型可能不经询问就照它行事</translation>
        </message>
        <message>
            <source>set injection_guard = "on" in settings.toml</source>
            <translation>在 settings.toml 中设置 injection_guard = "on"</translation>
        </message>
        <message>
            <source>{program} not found on PATH</source>
            <translation>在 PATH 中未找到 {program}</translation>
        </message>
        <message>
            <source>install {program} (Debian/Ubuntu: sudo apt install tesseract-ocr), or put it on PATH</source>
            <translation>安装 {program}（Debian/Ubuntu：sudo apt install tesseract-ocr），或把它加入 PATH</translation>
        </message>
        <message>
            <source>ways to get one:</source>
            <translation>获取模型服务器的方法：</translation>
        </message>
        <message>
            <source>start the model server or set --base-url</source>
            <translation>启动模型服务器，或设置 --base-url</translation>
        </message>
        <message>
            <source>{how}: clicks go where the model says</source>
            <translation>{how}：点击位置即模型所说的位置</translation>
        </message>
        <message>
            <source>{how}: the model looks again on a crop</source>
            <translation>{how}：模型在裁剪图上再看一次</translation>
        </message>
        <message>
            <source>{how}: {model} at {url}, profile {profile} ({format} answers, coordinates {coordinates})</source>
            <translation>{how}：{model}，位于 {url}，配置 {profile}（{format} 格式的回答，坐标 {coordinates}）</translation>
        </message>
        <message>
            <source>no runs yet</source>
            <translation>还没有运行</translation>
        </message>
        <message>
            <source>the stop shortcut was not set: {error}</source>
            <translation>停止快捷键未设置：{error}</translation>
        </message>
        <message>
            <source>{version} at {path}</source>
            <translation>{version}，位于 {path}</translation>
        </message>
        <message>
            <source>{path} does not run ({error})</source>
            <translation>{path} 无法运行（{error}）</translation>
        </message>
        <message>
            <source>check that `{path} --version` runs, or reinstall it (Debian/Ubuntu: sudo apt install --reinstall tesseract-ocr)</source>
            <translation>检查 `{path} --version` 能否运行，或重新安装它（Debian/Ubuntu：sudo apt install --reinstall tesseract-ocr）</translation>
        </message>
        <message>
            <source>{said}; not used while the injection guard is off</source>
            <translation>{said}；注入防护关闭时不使用</translation>
        </message>
        <message>
            <source>{said}; not used on Windows: UI Automation lists no region that only its pixels show</source>
            <translation>{said}；在 Windows 上不使用：UI Automation 不会列出只能从像素读取的区域</translation>
        </message>
        <message>
            <source>{said}; not used on a Wayland session: its element list has no region that only its pixels show</source>
            <translation>{said}；在 Wayland 会话中不使用：它的元素列表中没有只能从像素读取的区域</translation>
        </message>
        <message>
            <source>model servers on this machine (127.0.0.1, ports {ports}):</source>
            <translation>本机上的模型服务器（127.0.0.1，端口 {ports}）：</translation>
        </message>
        <message>
            <source>  {title}: {note}</source>
            <translation>  {title}：{note}</translation>
        </message>
        <message>
            <source>{model} at {url}</source>
            <translation>{model}，位于 {url}</translation>
        </message>
        <message>
            <source>{profile} ({setting}): {note}; coordinates {coordinates}; backend {backend}: {protocol}</source>
            <translation>{profile}（{setting}）：{note}；坐标 {coordinates}；后端 {backend}：{protocol}</translation>
        </message>
        <message>
            <source>set vision = "yes" in settings.toml or pass --vision yes if the model can see</source>
            <translation>如果模型能看图，在 settings.toml 中设置 vision = "yes"，或传入 --vision yes</translation>
        </message>
        <message>
            <source>store the key in Settings or in the {variable} variable</source>
            <translation>在设置中保存密钥，或设置 {variable} 环境变量</translation>
        </message>
        <message>
            <source>start the grounding model's server or set grounder_base_url / --grounder-url</source>
            <translation>启动定位模型的服务器，或设置 grounder_base_url / --grounder-url</translation>
        </message>
        <message>
            <source>load the grounding model on its server or set grounder_model</source>
            <translation>在服务器上加载定位模型，或设置 grounder_model</translation>
        </message>
        <message>
            <source>the goal is empty</source>
            <translation>目标为空</translation>
        </message>
        <message>
            <source>serving the local API on {url} (token: {file})</source>
            <translation>本地 API 已在 {url} 提供服务（令牌：{file}）</translation>
        </message>
        <message>
            <source>stopped: the model server is asked nothing more</source>
            <translation>已停止：不再向模型服务器发送任何请求</translation>
        </message>
        <message>
            <source>ok</source>
            <translation>成功</translation>
        </message>
        <message>
            <source>FAIL</source>
            <translation>失败</translation>
        </message>
        <message>
            <source>use it: {command}</source>
            <translation>使用它：{command}</translation>
        </message>
        <message>
            <source>fix: {fix}</source>
            <translation>解决办法：{fix}</translation>
        </message>
        <message>
            <source>allow {tool} {arguments}?</source>
            <translation>允许 {tool} {arguments} 吗？</translation>
        </message>
        <message>
            <source>reason: {reason}</source>
            <translation>理由：{reason}</translation>
        </message>
        <message>
            <source>(denies in {seconds} s):</source>
            <translation>（{seconds} 秒后自动拒绝）：</translation>
        </message>
        <message>
            <source>[o]nce / [r]un / [d]eny</source>
            <translation>[o] 允许一次 / [r] 本次运行内允许 / [d] 拒绝</translation>
        </message>
        <message>
            <source>[o]nce / [d]eny</source>
            <translation>[o] 允许一次 / [d] 拒绝</translation>
        </message>
        <message>
            <source>safety check {code}: {message}</source>
            <translation>安全检查 {code}：{message}</translation>
        </message>
        <message>
            <source>(that came before the question could be read; answer again):</source>
            <translation>（这个回答早于问题可被读到的时间；请再回答一次）：</translation>
        </message>
        <message>
            <source>asks every time: {why}</source>
            <translation>每次都会询问：{why}</translation>
        </message>
        <message>
            <source>on: {monitor}</source>
            <translation>位置：{monitor}</translation>
        </message>
        <message>
            <source>queued</source>
            <translation>排队中</translation>
        </message>
        <message>
            <source>running</source>
            <translation>运行中</translation>
        </message>
        <message>
            <source>paused</source>
            <translation>已暂停</translation>
        </message>
        <message>
            <source>completed</source>
            <translation>已完成</translation>
        </message>
        <message>
            <source>failed</source>
            <translation>失败</translation>
        </message>
        <message>
            <source>stopped</source>
            <translation>已停止</translation>
        </message>
        <message>
            <source>interrupted</source>
            <translation>已中断</translation>
        </message>
        <message>
            <source>done</source>
            <translation>已达成</translation>
        </message>
        <message>
            <source>error</source>
            <translation>出错</translation>
        </message>
        <message>
            <source>max_failures</source>
            <translation>失败次数达到上限</translation>
        </message>
        <message>
            <source>breaker</source>
            <translation>熔断</translation>
        </message>
        <message>
            <source>user_stop</source>
            <translation>用户停止</translation>
        </message>
        <message>
            <source>max_steps</source>
            <translation>步骤数达到上限</translation>
        </message>
        <message>
            <source>crash</source>
            <translation>崩溃</translation>
        </message>
        <message>
            <source>stuck</source>
            <translation>卡住</translation>
        </message>
        <message>
            <source>budget</source>
            <translation>预算用尽</translation>
        </message>
        <message>
            <source>routine_mismatch</source>
            <translation>例程与屏幕不符</translation>
        </message>
        <message>
            <source>observe</source>
            <translation>观察</translation>
        </message>
        <message>
            <source>decide</source>
            <translation>决策</translation>
        </message>
        <message>
            <source>ground</source>
            <translation>定位</translation>
        </message>
        <message>
            <source>action</source>
            <translation>操作</translation>
        </message>
        <message>
            <source>denied</source>
            <translation>已拒绝</translation>
        </message>
        <message>
            <source>skipped</source>
            <translation>已跳过</translation>
        </message>
        <message>
            <source>once</source>
            <translation>允许一次</translation>
        </message>
        <message>
            <source>run</source>
            <translation>本次运行内允许</translation>
        </message>
        <message>
            <source>deny</source>
            <translation>拒绝</translation>
        </message>
        <message>
            <source>run {id} {status} after {turns} turn(s){elapsed}; {usage}{message}</source>
            <translation>运行 {id} {status}，共 {turns} 轮{elapsed}；{usage}{message}</translation>
        </message>
        <message>
            <source>{prompt} + {completion} tokens, {cost}</source>
            <translation>{prompt} + {completion} 个 token，{cost}</translation>
        </message>
        <message>
            <source>, model profile {profile}</source>
            <translation>，模型配置 {profile}</translation>
        </message>
        <message>
            <source>run {id}: {goal} with {model} (max {steps} steps{more})</source>
            <translation>运行 {id}：{goal}，使用 {model}（最多 {steps} 步{more}）</translation>
        </message>
        <message>
            <source>approval asked: {action} ({tool} {arguments})</source>
            <translation>请求批准：{action}（{tool} {arguments}）</translation>
        </message>
        <message>
            <source> in {seconds} s</source>
            <translation>，用时 {seconds} 秒</translation>
        </message>
        <message>
            <source>{status} / {reason}</source>
            <translation>{status} / {reason}</translation>
        </message>
        <message>
            <source>: {message}</source>
            <translation>：{message}</translation>
        </message>
        <message>
            <source>cost unknown</source>
            <translation>费用未知</translation>
        </message>
        <message>
            <source>{prompt} + {completion} tokens (estimated), {cost}</source>
            <translation>{prompt} + {completion} 个 token（估算），{cost}</translation>
        </message>
        <message>
            <source>resume: {command}</source>
            <translation>继续：{command}</translation>
        </message>
        <message>
            <source>, monitor {monitor}</source>
            <translation>，显示器 {monitor}</translation>
        </message>
        <message>
            <source>{ms} ms</source>
            <translation>{ms} 毫秒</translation>
        </message>
        <message>
            <source>resumed</source>
            <translation>已继续</translation>
        </message>
        <message>
            <source> on {monitor}</source>
            <translation>，位于{monitor}</translation>
        </message>
        <message>
            <source>approval: {decision}</source>
            <translation>批准结果：{decision}</translation>
        </message>
        <message>
            <source>paused: you took over the mouse or keyboard; {hint}</source>
            <translation>已暂停：你接管了鼠标或键盘；{hint}</translation>
        </message>
        <message>
            <source>{action}: {detail}</source>
            <translation>{action}：{detail}</translation>
        </message>
        <message>
            <source>approval: {decision} (timed out)</source>
            <translation>批准结果：{decision}（已超时）</translation>
        </message>
        <message>
            <source>your own input will not pause the run: {why}</source>
            <translation>你自己的输入不会暂停运行：{why}</translation>
        </message>
        <message>
            <source>paused: you took over; {hint}</source>
            <translation>已暂停：你接管了操作；{hint}</translation>
        </message>
        <message>
            <source>{value} is out of range {low}..{high}</source>
            <translation>{value} 超出范围 {low}..{high}</translation>
        </message>
        <message>
            <source>no tools given</source>
            <translation>没有给出工具</translation>
        </message>
        <message>
            <source>unknown tool(s): {unknown}; known: {known}</source>
            <translation>未知的工具：{unknown}；已知的工具：{known}</translation>
        </message>
        <message>
            <source>Carry out tasks on this desktop.</source>
            <translation>在这台电脑的桌面上执行任务。</translation>
        </message>
        <message>
            <source>where history, screenshots and the API token live</source>
            <translation>历史记录、截图和 API 令牌的存放位置</translation>
        </message>
        <message>
            <source>stop every run of every instance on this data dir</source>
            <translation>停止使用此数据目录的所有实例的所有运行</translation>
        </message>
        <message>
            <source>one run, no window; events on stdout</source>
            <translation>执行一次运行，不开窗口；事件输出到标准输出</translation>
        </message>
        <message>
            <source>what to do, in words</source>
            <translation>要做什么，用文字描述</translation>
        </message>
        <message>
            <source>OpenAI-compatible server, e.g. http://localhost:11434/v1</source>
            <translation>兼容 OpenAI 的服务器，例如 http://localhost:11434/v1</translation>
        </message>
        <message>
            <source>model name, e.g. qwen2.5vl</source>
            <translation>模型名称，例如 qwen2.5vl</translation>
        </message>
        <message>
            <source>environment variable holding the API key</source>
            <translation>存放 API 密钥的环境变量</translation>
        </message>
        <message>
            <source>allowed tools, comma-separated</source>
            <translation>允许的工具，以逗号分隔</translation>
        </message>
        <message>
            <source>ask on the terminal (default; no terminal: deny), all, or none (deny). 'all' never approves a dangerous call (launch_app, a launcher key such as super+r, a paste, a line typed into a terminal, a password field, a sensitive button) unless its tool is named with --allow-dangerous</source>
            <translation>ask：在终端上询问（默认；没有终端时拒绝），all：全部批准，none：全部拒绝。all 从不批准危险的调用（launch_app、super+r 之类的启动键、粘贴、输入到终端的一行、密码框、敏感按钮），除非其工具用 --allow-dangerous 列出</translation>
        </message>
        <message>
            <source>with --approve all: also approve these tools' dangerous calls</source>
            <translation>与 --approve all 一起使用：也批准这些工具的危险调用</translation>
        </message>
        <message>
            <source>model family (default auto)</source>
            <translation>模型系列（默认 auto）</translation>
        </message>
        <message>
            <source>the monitor the model sees (default: the settings', auto: the active window's)</source>
            <translation>模型看到的显示器（默认：按设置；auto：活动窗口所在的显示器）</translation>
        </message>
        <message>
            <source>how a click by coordinates is refined (default: the settings'; auto: the model profile's)</source>
            <translation>按坐标点击时如何修正位置（默认：按设置；auto：按模型配置）</translation>
        </message>
        <message>
            <source>the grounding model's server</source>
            <translation>定位模型的服务器</translation>
        </message>
        <message>
            <source>a grounding model (implies --grounding grounder)</source>
            <translation>定位模型（意味着 --grounding grounder）</translation>
        </message>
        <message>
            <source>one JSON object per line per event</source>
            <translation>每个事件一行 JSON 对象</translation>
        </message>
        <message>
            <source>run history, newest first</source>
            <translation>运行历史，最新的在前</translation>
        </message>
        <message>
            <source>replay a stored run's events</source>
            <translation>重放一次已保存运行的事件</translation>
        </message>
        <message>
            <source>no window: serve the local API until stopped</source>
            <translation>不开窗口：提供本地 API，直到被停止</translation>
        </message>
        <message>
            <source>serve the agent to an MCP client (stdio; --http: streamable HTTP)</source>
            <translation>把智能体提供给 MCP 客户端（stdio；--http：可流式 HTTP）</translation>
        </message>
        <message>
            <source>streamable HTTP on 127.0.0.1 (token as the API's)</source>
            <translation>在 127.0.0.1 上提供可流式 HTTP（令牌与 API 相同）</translation>
        </message>
        <message>
            <source>the client's user may answer questions about ordinary input calls (never about a call that asks every time: those go to this desktop's dialog)</source>
            <translation>客户端的用户可以回答关于普通输入调用的询问（每次都询问的调用除外：这些由本机桌面上的对话框询问）</translation>
        </message>
        <message>
            <source>check display, capture, input, hotkey, model</source>
            <translation>检查显示、截图、输入、热键和模型</translation>
        </message>
        <message>
            <source>the model server to check</source>
            <translation>要检查的模型服务器</translation>
        </message>
        <message>
            <source>the model to check</source>
            <translation>要检查的模型</translation>
        </message>
        <message>
            <source>on GNOME or KDE Plasma (Wayland): bind KEYS (GTK accelerator, default &lt;Control&gt;&lt;Alt&gt;Escape) to `desktop-agent stop-all` as the desktop's own keyboard shortcut</source>
            <translation>在 GNOME 或 KDE Plasma（Wayland）上：把 KEYS（GTK 快捷键写法，默认 &lt;Control&gt;&lt;Alt&gt;Escape）绑定到 `desktop-agent stop-all`，作为桌面自己的键盘快捷键</translation>
        </message>
        <message>
            <source>show targets on the screen, ask the model to click each, report the error in pixels and the coordinate space that fits; offers to save it</source>
            <translation>在屏幕上显示目标，让模型逐一点击，报告以像素计的误差和合适的坐标空间；可以保存结果</translation>
        </message>
        <message>
            <source>not a whole number: {text}</source>
            <translation>不是整数：{text}</translation>
        </message>
        <message>
            <source>saved routine {name}: {outline}</source>
            <translation>已保存例程 {name}：{outline}</translation>
        </message>
        <message>
            <source>{count} steps; parameters: {parameters}{grants}{when}</source>
            <translation>{count} 步；参数：{parameters}{grants}{when}</translation>
        </message>
        <message>
            <source>imported routine {name}: {outline}</source>
            <translation>已导入例程 {name}：{outline}</translation>
        </message>
        <message>
            <source>the routine it replaced was scheduled: its timer is removed; schedule this one with `routine schedule {name} --at HH:MM`</source>
            <translation>被替换的例程曾有定时：它的定时器已删除；用 `routine schedule {name} --at HH:MM` 为这个例程设定时间</translation>
        </message>
        <message>
            <source>; grants {tools}</source>
            <translation>；授权 {tools}</translation>
        </message>
        <message>
            <source>wrote {file}</source>
            <translation>已写入 {file}</translation>
        </message>
        <message>
            <source>deleted routine {name}</source>
            <translation>已删除例程 {name}</translation>
        </message>
        <message>
            <source>the schedule is written but not active: {problem}</source>
            <translation>定时已写入但未生效：{problem}</translation>
        </message>
        <message>
            <source>routine {name} starts Monday to Friday at {time}</source>
            <translation>例程 {name} 将在周一至周五的 {time} 启动</translation>
        </message>
        <message>
            <source>routine {name} starts every day at {time}</source>
            <translation>例程 {name} 将在每天 {time} 启动</translation>
        </message>
        <message>
            <source>routine {name} is not scheduled</source>
            <translation>例程 {name} 没有定时</translation>
        </message>
        <message>
            <source>{name} for routine {routine} (not saved):</source>
            <translation>例程 {routine} 的 {name}（不会保存）：</translation>
        </message>
        <message>
            <source>{option}: give NAME=VALUE, not {text}</source>
            <translation>{option}：请给出 NAME=VALUE，而不是 {text}</translation>
        </message>
        <message>
            <source>save a run as a routine; run it again</source>
            <translation>把一次运行保存为例程；再次运行它</translation>
        </message>
        <message>
            <source>save a completed run as a routine</source>
            <translation>把一次已完成的运行保存为例程</translation>
        </message>
        <message>
            <source>make the text typed at TURN (as `show RUN_ID` numbers the turns) a parameter; repeat a NAME for one text typed in several places</source>
            <translation>把第 TURN 轮（轮次编号见 `show RUN_ID`）输入的文字设为参数；同一段文字在多处输入时重复同一个 NAME</translation>
        </message>
        <message>
            <source>allow these tools without asking in this routine's runs</source>
            <translation>在此例程的运行中不经询问就允许这些工具</translation>
        </message>
        <message>
            <source>overwrite a routine of that name</source>
            <translation>覆盖同名的例程</translation>
        </message>
        <message>
            <source>the saved routines, their parameters, schedules</source>
            <translation>已保存的例程、它们的参数和定时</translation>
        </message>
        <message>
            <source>write a routine as one readable JSON file</source>
            <translation>把例程写成一个可读的 JSON 文件</translation>
        </message>
        <message>
            <source>read a routine file into the history store</source>
            <translation>把例程文件读入历史存储</translation>
        </message>
        <message>
            <source>save it under this name</source>
            <translation>以此名称保存</translation>
        </message>
        <message>
            <source>forget a routine (and its schedule)</source>
            <translation>删除一个例程（及其定时）</translation>
        </message>
        <message>
            <source>run a routine: no model while the screen matches</source>
            <translation>运行例程：只要屏幕相符就不用模型</translation>
        </message>
        <message>
            <source>a parameter's text for this run</source>
            <translation>本次运行中某个参数的文字</translation>
        </message>
        <message>
            <source>as for `run`; the routine's grants answer for their tools</source>
            <translation>同 `run`；例程的授权替其工具作答</translation>
        </message>
        <message>
            <source>never hand over to the model: a mismatch ends the run routine_mismatch</source>
            <translation>从不交给模型：一旦不符，运行以 routine_mismatch 结束</translation>
        </message>
        <message>
            <source>started by the OS: nobody answers; it refuses to start if it would ask</source>
            <translation>由操作系统启动：无人作答；如果会需要询问，就拒绝启动</translation>
        </message>
        <message>
            <source>start a routine at a time of day (OS timer)</source>
            <translation>在每天的某个时间启动例程（操作系统定时器）</translation>
        </message>
        <message>
            <source>Monday to Friday only</source>
            <translation>仅周一至周五</translation>
        </message>
        <message>
            <source>remove a routine's OS timer</source>
            <translation>删除例程的操作系统定时器</translation>
        </message>
        <message>
            <source>; scheduled weekdays at {time}</source>
            <translation>；定时于工作日 {time}</translation>
        </message>
        <message>
            <source>; scheduled daily at {time}</source>
            <translation>；定时于每天 {time}</translation>
        </message>
        <message>
            <source>no routines yet (save one: desktop-agent routine save RUN_ID NAME)</source>
            <translation>还没有例程（保存一个：desktop-agent routine save RUN_ID NAME）</translation>
        </message>
        <message>
            <source>no routine named {name}</source>
            <translation>没有名为 {name} 的例程</translation>
        </message>
        <message>
            <source>removed {file}</source>
            <translation>已删除 {file}</translation>
        </message>
        <message>
            <source>{given}: TURN is a turn number (see `show`)</source>
            <translation>{given}：TURN 是轮次编号（见 `show`）</translation>
        </message>
        <message>
            <source>{name} (secret)</source>
            <translation>{name}（保密）</translation>
        </message>
        <message>
            <source>none</source>
            <translation>无</translation>
        </message>
        <message>
            <source>routine {name} is not scheduled, so no timer should start it: remove the one that did with `desktop-agent routine unschedule {name}`</source>
            <translation>例程 {name} 没有定时，因此不应有定时器启动它：用 `desktop-agent routine unschedule {name}` 删除启动它的定时器</translation>
        </message>
        <message>
            <source>routine {name} would ask, and nobody is there to answer: {questions}</source>
            <translation>例程 {name} 会需要询问，而没有人在场回答：{questions}</translation>
        </message>
        <message>
            <source>routine {routine} needs {name} (a password field's text): give it with --set {name}=… or run it on a terminal</source>
            <translation>例程 {routine} 需要 {name}（密码框的文字）：用 --set {name}=… 给出，或在终端上运行</translation>
        </message>
        <message>
            <source>data dir {dir} cannot be written: {why}</source>
            <translation>无法写入数据目录 {dir}：{why}</translation>
        </message>
        <message>
            <source>monitor {number}, {width}x{height} at {left},{top}</source>
            <translation>显示器 {number}，{width}x{height}，位于 {left},{top}</translation>
        </message>
        <message>
            <source>monitor {number} (the primary), {width}x{height} at {left},{top}</source>
            <translation>显示器 {number}（主显示器），{width}x{height}，位于 {left},{top}</translation>
        </message>
        <message>
            <source>saved model_coordinates = "{space}" in {file}</source>
            <translation>已在 {file} 中保存 model_coordinates = "{space}"</translation>
        </message>
        <message>
            <source>mcp over stdio needs the client's pipes, and this program has none (the windowed exe started without them): start it from the console program (desktop-agent, or desktop-agent-cli in the installed bundle), or use --http</source>
            <translation>通过 stdio 提供 MCP 需要客户端的管道，而本程序没有（窗口版 exe 启动时不带管道）：请从控制台程序启动（desktop-agent，或安装包中的 desktop-agent-cli），或使用 --http</translation>
        </message>
        <message>
            <source>press Save in the window to keep its finding; Close or Escape ends</source>
            <translation>在窗口中按“保存”以保留结果；按“关闭”或 Esc 结束</translation>
        </message>
    </context>
    <context>
        <name>argparse</name>
        <message>
            <source>conflicting option string: %s</source>
            <translation>选项字符串冲突：%s</translation>
        </message>
        <message>
            <source>conflicting option strings: %s</source>
            <translation>选项字符串冲突：%s</translation>
        </message>
        <message>
            <source>usage: </source>
            <translation>用法：</translation>
        </message>
        <message>
            <source>argument %(argument_name)s: %(message)s</source>
            <translation>参数 %(argument_name)s：%(message)s</translation>
        </message>
        <message>
            <source>.__call__() not defined</source>
            <translation>.__call__() 未定义</translation>
        </message>
        <message>
            <source>'required' is an invalid argument for positionals</source>
            <translation>'required' 不是位置参数的有效参数</translation>
        </message>
        <message>
            <source>mutually exclusive arguments must be optional</source>
            <translation>互斥的参数必须是可选的</translation>
        </message>
        <message>
            <source>positional arguments</source>
            <translation>位置参数</translation>
        </message>
        <message>
            <source>options</source>
            <translation>选项</translation>
        </message>
        <message>
            <source>unrecognized arguments: %s</source>
            <translation>无法识别的参数：%s</translation>
        </message>
        <message>
            <source>ambiguous option: %(option)s could match %(matches)s</source>
            <translation>有歧义的选项：%(option)s 可以匹配 %(matches)s</translation>
        </message>
        <message>
            <source>%r is not callable</source>
            <translation>%r 不可调用</translation>
        </message>
        <message>
            <source>invalid choice: %(value)r (choose from %(choices)s)</source>
            <translation>无效的选择：%(value)r（可选：%(choices)s）</translation>
        </message>
        <message>
            <source>can't open '%(filename)s': %(error)s</source>
            <translation>无法打开 '%(filename)s'：%(error)s</translation>
        </message>
        <message>
            <source>cannot merge actions - two groups are named %r</source>
            <translation>无法合并动作——两个组都名为 %r</translation>
        </message>
        <message>
            <source>invalid option string %(option)r: must start with a character %(prefix_chars)r</source>
            <translation>无效的选项字符串 %(option)r：必须以字符 %(prefix_chars)r 开头</translation>
        </message>
        <message>
            <source>dest= is required for options like %r</source>
            <translation>像 %r 这样的选项需要 dest=</translation>
        </message>
        <message>
            <source>invalid conflict_resolution value: %r</source>
            <translation>无效的 conflict_resolution 值：%r</translation>
        </message>
        <message>
            <source>cannot have multiple subparser arguments</source>
            <translation>不能有多个子命令参数</translation>
        </message>
        <message>
            <source>expected one argument</source>
            <translation>需要一个参数</translation>
        </message>
        <message>
            <source>expected at most one argument</source>
            <translation>最多需要一个参数</translation>
        </message>
        <message>
            <source>expected at least one argument</source>
            <translation>至少需要一个参数</translation>
        </message>
        <message>
            <source>invalid %(type)s value: %(value)r</source>
            <translation>无效的 %(type)s 值：%(value)r</translation>
        </message>
        <message>
            <source>%(prog)s: error: %(message)s
</source>
            <translation>%(prog)s：错误：%(message)s
</translation>
        </message>
        <message>
            <source>conflicting subparser: %s</source>
            <translation>子命令冲突：%s</translation>
        </message>
        <message>
            <source>unknown parser %(parser_name)r (choices: %(choices)s)</source>
            <translation>未知的子命令 %(parser_name)r（可选：%(choices)s）</translation>
        </message>
        <message>
            <source>show this help message and exit</source>
            <translation>显示此帮助信息并退出</translation>
        </message>
        <message>
            <source>the following arguments are required: %s</source>
            <translation>缺少以下参数：%s</translation>
        </message>
        <message>
            <source>one of the arguments %s is required</source>
            <translation>需要参数 %s 之一</translation>
        </message>
        <message>
            <source>expected %s argument</source>
            <translation>需要 %s 个参数</translation>
        </message>
        <message>
            <source>expected %s arguments</source>
            <translation>需要 %s 个参数</translation>
        </message>
        <message>
            <source>conflicting subparser alias: %s</source>
            <translation>子命令别名冲突：%s</translation>
        </message>
        <message>
            <source>argument "-" with mode %r</source>
            <translation>模式为 %r 的参数 "-"</translation>
        </message>
        <message>
            <source>not allowed with argument %s</source>
            <translation>不能与参数 %s 一起使用</translation>
        </message>
        <message>
            <source>unexpected option string: %s</source>
            <translation>意外的选项字符串：%s</translation>
        </message>
        <message>
            <source>ignored explicit argument %r</source>
            <translation>忽略了显式参数 %r</translation>
        </message>
    </context>
    <context>
        <name>ModelServers</name>
        <message>
            <source>The first command installs Ollama and starts its server; then pull a vision model (about 6 GB; a GPU helps). Without a GPU, the 3B one (about 3 GB) is the one to try.</source>
            <translation>第一条命令安装 Ollama 并启动它的服务器；然后下载一个视觉模型（约 6 GB；有 GPU 更好）。没有 GPU 时，可以试试 3B 的那个（约 3 GB）。</translation>
        </message>
        <message>
            <source>Install it from https://ollama.com/download (it starts its server); then pull a vision model (about 6 GB; a GPU helps). Without a GPU, the 3B one (about 3 GB) is the one to try.</source>
            <translation>从 https://ollama.com/download 安装（它会启动自己的服务器）；然后下载一个视觉模型（约 6 GB；有 GPU 更好）。没有 GPU 时，可以试试 3B 的那个（约 3 GB）。</translation>
        </message>
        <message>
            <source>vision unknown</source>
            <translation>视觉未知</translation>
        </message>
        <message>
            <source>sees</source>
            <translation>能看图</translation>
        </message>
        <message>
            <source>no vision</source>
            <translation>不能看图</translation>
        </message>
        <message>
            <source>no model server answers on this machine (ports {ports})</source>
            <translation>本机上没有模型服务器应答（端口 {ports}）</translation>
        </message>
        <message>
            <source>start one, e.g. `ollama serve` then `ollama pull qwen2.5vl` (see the README)</source>
            <translation>启动一个，例如先 `ollama serve`，再 `ollama pull qwen2.5vl`（见 README）</translation>
        </message>
        <message>
            <source>Ollama — on this computer, free</source>
            <translation>Ollama —— 在本机运行，免费</translation>
        </message>
        <message>
            <source>LM Studio — on this computer, with a window</source>
            <translation>LM Studio —— 在本机运行，带窗口</translation>
        </message>
        <message>
            <source>Install it from https://lmstudio.ai, download a vision model (e.g. Qwen2.5-VL-7B), load it, and start the server (Developer tab, or:)</source>
            <translation>从 https://lmstudio.ai 安装，下载一个视觉模型（例如 Qwen2.5-VL-7B），加载它，然后启动服务器（在 Developer 选项卡中，或者：）</translation>
        </message>
        <message>
            <source>A hosted OpenAI-compatible service — needs an API key</source>
            <translation>托管的 OpenAI 兼容服务 —— 需要 API 密钥</translation>
        </message>
        <message>
            <source>Screenshots leave this computer. Set the key, then choose the service in Settings (or pass it to desktop-agent run):</source>
            <translation>截图会离开这台电脑。设置密钥，然后在设置中选择该服务（或把它传给 desktop-agent run）：</translation>
        </message>
        <message>
            <source>use it with: {options}</source>
            <translation>这样使用它：{options}</translation>
        </message>
        <message>
            <source>none of their models is known to see screenshots: load a vision model (e.g. `ollama pull qwen2.5vl`), or pass --vision yes if yours can see</source>
            <translation>它们的模型都不确定能看截图：请加载一个视觉模型（例如 `ollama pull qwen2.5vl`），如果你的模型能看图，也可以传入 --vision yes</translation>
        </message>
        <message>
            <source>{count} chat model(s)</source>
            <translation>{count} 个对话模型</translation>
        </message>
        <message>
            <source>no chat model</source>
            <translation>没有对话模型</translation>
        </message>
        <message>
            <source>{server} at {url}: {count}</source>
            <translation>{server}，位于 {url}：{count}</translation>
        </message>
        <message>
            <source>profile {profile}</source>
            <translation>配置 {profile}</translation>
        </message>
    </context>
</TS>
