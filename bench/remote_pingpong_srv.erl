%% Peer of bench/remote_pingpong.sh: a gen_server registered as `echo` answering
%% {'add:', [V]} with a running count, like the bt actor in remote_pingpong_server.bt.
-module(remote_pingpong_srv).
-behaviour(gen_server).
-export([start/0, init/1, handle_call/3, handle_cast/2, run/3, idle/0]).

start() ->
    {ok, _} = gen_server:start({local, echo}, ?MODULE, 0, []),
    io:format("ready~n").

init(N) -> {ok, N}.
handle_call({'add:', [V]}, _From, N) -> {reply, N + V, N + V}.
handle_cast(_, N) -> {noreply, N}.

%% What the client spawns remotely: a process that waits forever.
idle() -> receive stop -> ok end.

%% Client side: N sync calls to {echo, Node}, then M spawn/4 on Node; prints the times.
run(Node, N, M) ->
    pong = net_adm:ping(Node),
    gen_server:call({echo, Node}, {'add:', [1]}),
    T0 = erlang:monotonic_time(microsecond),
    loop(Node, N),
    Us = erlang:monotonic_time(microsecond) - T0,
    io:format("TIME ~w~n", [Us / 1000000]),
    T1 = erlang:monotonic_time(microsecond),
    spawns(Node, M),
    %% spawn/4 answers before the process exists there: one round trip makes sure all did.
    gen_server:call({echo, Node}, {'add:', [1]}),
    Us2 = erlang:monotonic_time(microsecond) - T1,
    io:format("SPAWN ~w~n", [Us2 / 1000000]),
    halt().

loop(_, 0) -> ok;
loop(Node, K) -> gen_server:call({echo, Node}, {'add:', [1]}), loop(Node, K - 1).

spawns(_, 0) -> ok;
spawns(Node, K) -> spawn(Node, ?MODULE, idle, []), spawns(Node, K - 1).
