%% The Erlang side of the wire property test (tests/dist/wire_property.rs), compiled by the
%% test's `erl` at start. Reads the generated values as specs (specs.terms, one per value, in
%% the order of the bt data) and bt's own encoding of each (golden.bin), then:
%%  1. `mirror` answers bt's `check: Batch from: Start` calls: checks each received term
%%     against its spec (bt -> erl) and replies with the batch (bt checks erl -> bt);
%%  2. after bt's `go`, sends every value to the bt actor `echo` (`check: Batch at: Indexes`,
%%     bt checks erl -> bt) and compares each reply with what it sent (erl -> bt -> erl);
%%  3. compares bt's bytes with term_to_binary (canonical values) or decodes them and checks
%%     the spec (the others).
%% Spec language: nil | true | false | Integer | Binary (a String or a Binary) |
%% {f, Bits} (the float of those IEEE bits) | {a, Utf8} (an atom) | {l, Specs} | {t, Specs} |
%% {m, [{KeySpec, Spec}]} | {p, X, Y} (a Point value object) | bt_only (a tagged term).
-module(wire_property).
-export([main/2]).

-define(BATCH, 500).

main(Dir, Bt) ->
    %% Atoms print as their characters (UTF-8 on the pipe).
    ok = io:setopts([{encoding, unicode}]),
    {ok, Specs0} = file:consult(filename:join(Dir, "specs.terms")),
    Specs = list_to_tuple(Specs0),
    {ok, GoldenBin} = file:read_file(filename:join(Dir, "golden.bin")),
    Golden = split(GoldenBin),
    Main = self(),
    register(mirror, spawn_link(fun() -> mirror(Main, Specs, [], 0) end)),
    io:format("ready~n"),
    {Received, MirrorBad} = receive {go, R, Bad} -> {list_to_tuple(R), Bad} end,
    io:format("bt->erl: checked ~w bad ~w~n", [tuple_size(Received), MirrorBad]),
    N = tuple_size(Specs),
    Terms = [case pure(element(I, Specs)) of
                 true -> build(element(I, Specs));
                 false -> element(I, Received)
             end || I <- lists:seq(1, N)],
    RoundBad = round_trip(Bt, lists:zip(lists:seq(1, N), Terms), 0),
    io:format("erl->bt->erl: checked ~w bad ~w~n", [N, RoundBad]),
    {ok, EchoBad} = gen_server:call({echo, Bt}, {bad, []}, 60000),
    io:format("erl->bt: checked ~w bad ~w~n", [N, EchoBad]),
    {Bytes, Decoded, GoldenBad} = golden(lists:zip(tuple_to_list(Specs), Golden), 1, {0, 0, 0}),
    io:format("golden: bytes ~w decoded ~w bad ~w~n", [Bytes, Decoded, GoldenBad]),
    io:format("done~n"),
    halt().

mirror(Main, Specs, Acc, Bad) ->
    receive
        {'$gen_call', From, {'check:from:', [Batch, Start]}} ->
            Bad1 = check_batch(Specs, Batch, Start, Bad),
            gen:reply(From, Batch),
            mirror(Main, Specs, [Batch | Acc], Bad1);
        {'$gen_call', From, {go, []}} ->
            gen:reply(From, ok),
            Main ! {go, lists:append(lists:reverse(Acc)), Bad}
    end.

check_batch(_, [], _, Bad) -> Bad;
check_batch(Specs, [X | Xs], I, Bad) ->
    case check(element(I, Specs), X) of
        true -> check_batch(Specs, Xs, I + 1, Bad);
        false ->
            io:format("bt->erl ~w: got ~w spec ~w~n", [I, X, element(I, Specs)]),
            check_batch(Specs, Xs, I + 1, Bad + 1)
    end.

round_trip(_, [], Bad) -> Bad;
round_trip(Bt, Items, Bad) ->
    {Batch, Rest} = lists:split(min(?BATCH, length(Items)), Items),
    Indexes = [I || {I, _} <- Batch],
    Sent = [T || {_, T} <- Batch],
    {ok, Back} = gen_server:call({echo, Bt}, {'check:at:', [Sent, Indexes]}, 60000),
    Bad1 = length(Back) =/= length(Sent),
    Bad2 = lists:foldl(
             fun({I, S, B}, Acc) ->
                     case same(S, B) of
                         true -> Acc;
                         false ->
                             io:format("erl->bt->erl ~w: sent ~w got ~w~n", [I, S, B]),
                             Acc + 1
                     end
             end, 0, lists:zip3(Indexes, Sent, Back)),
    round_trip(Bt, Rest, Bad + Bad2 + case Bad1 of true -> 1; false -> 0 end).

golden([], _, Acc) -> Acc;
golden([{Spec, {Canonical, Bin}} | Rest], I, {Bytes, Decoded, Bad}) ->
    Ok = case Canonical of
             true -> term_to_binary(build(Spec), [{minor_version, 2}]) =:= Bin;
             false -> try check(Spec, binary_to_term(Bin)) catch _:_ -> false end
         end,
    Acc = case {Ok, Canonical} of
              {true, true} -> {Bytes + 1, Decoded, Bad};
              {true, false} -> {Bytes, Decoded + 1, Bad};
              {false, _} ->
                  io:format("golden ~w: bt ~w erl ~w~n",
                            [I, Bin, catch term_to_binary(build(Spec), [{minor_version, 2}])]),
                  {Bytes, Decoded, Bad + 1}
          end,
    golden(Rest, I + 1, Acc).

split(<<>>) -> [];
split(<<C, Len:32, Bin:Len/binary, Rest/binary>>) -> [{C =:= 1, Bin} | split(Rest)].

%% Exactly the same term: =:= (where 0.0 =:= -0.0 holds before OTP 27) and the same bytes.
same(A, B) -> A =:= B andalso term_to_binary(A) =:= term_to_binary(B).

pure(bt_only) -> false;
pure({l, L}) -> lists:all(fun pure/1, L);
pure({t, L}) -> lists:all(fun pure/1, L);
pure({m, Ps}) -> lists:all(fun({K, V}) -> pure(K) andalso pure(V) end, Ps);
pure({p, X, Y}) -> pure(X) andalso pure(Y);
pure(_) -> true.

build(I) when is_integer(I) -> I;
build(B) when is_binary(B) -> B;
build(A) when A =:= nil; A =:= true; A =:= false -> A;
build({f, Bits}) -> <<F:64/float>> = <<Bits:64>>, F;
build({a, B}) -> binary_to_atom(B, utf8);
build({l, L}) -> [build(E) || E <- L];
build({t, L}) -> list_to_tuple([build(E) || E <- L]);
build({m, Ps}) -> maps:from_list([{build(K), build(V)} || {K, V} <- Ps]);
build({p, X, Y}) ->
    #{'$beamtalk_class' => 'Point', '$beamtalk_version' => 1, x => build(X), y => build(Y)}.

check(bt_only, T) -> case T of {'$bt', 1, B} when is_binary(B) -> true; _ -> false end;
check({l, L}, T) ->
    is_list(T) andalso length(L) =:= length(T)
        andalso lists:all(fun({S, X}) -> check(S, X) end, lists:zip(L, T));
check({t, L}, T) -> is_tuple(T) andalso check({l, L}, tuple_to_list(T));
check({m, Ps}, T) ->
    is_map(T) andalso map_size(T) =:= length(Ps)
        andalso lists:all(fun({K, S}) ->
                                  case maps:find(build(K), T) of
                                      {ok, X} -> check(S, X);
                                      error -> false
                                  end
                          end, Ps);
check({p, X, Y}, T) ->
    check({m, [{{a, <<"$beamtalk_class">>}, {a, <<"Point">>}},
               {{a, <<"$beamtalk_version">>}, 1}, {{a, <<"x">>}, X}, {{a, <<"y">>}, Y}]}, T);
check(S, T) -> same(build(S), T).
