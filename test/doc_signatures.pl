#!/usr/bin/perl
# test/doc_signatures.pl sql SCRIPT DOC
# test/doc_signatures.pl c INCLUDE_DIR DOC
#
# The references give every function the arguments the code gives it.
#   sql: every function SCRIPT creates in schema mnemo (but the internal _
#        ones) against doc/sql.md's `name(arg type, ...)` entries, by
#        argument name (IN, OUT, INOUT and VARIADIC alike);
#   c:   every MNEMO_API function of INCLUDE_DIR/mnemo/*.h against
#        doc/c-api.md's `mnemo_name(...)` mentions, by parameter name (the
#        last identifier of each parameter, `&x` counting as x).
# A function passes when one of its name's entries in DOC lists the same
# names in the same order.  Prints each that does not, with what DOC has,
# and exits 1 if any does not (or none was found).
use strict;
use warnings;

my ($lang, $source, $doc) = @ARGV;
die "usage: doc_signatures.pl sql|c SOURCE DOC\n"
  unless defined $doc && ($lang eq 'sql' || $lang eq 'c');

sub slurp
{
	my ($path) = @_;
	local $/;
	open(my $fh, '<', $path) or die "$path: $!\n";
	my $text = <$fh>;
	close $fh;
	return $text;
}

# the arguments of a list, split at the commas outside parentheses
sub split_args
{
	my ($args) = @_;
	my @args = ('');
	my $depth = 0;

	for my $ch (split //, $args)
	{
		$depth++ if $ch eq '(';
		$depth-- if $ch eq ')';
		if ($ch eq ',' && $depth == 0)
		{
			push @args, '';
			next;
		}
		$args[-1] .= $ch;
	}
	pop @args if $args[-1] !~ /\S/;
	return @args;
}

# SQL: "a text, OUT b int DEFAULT f(1, 2)" -> "a,b"; an argument with no
# type is "?", so that "...same as..." never passes
sub sql_names
{
	my @names;

	for my $arg (split_args($_[0]))
	{
		$arg =~ s/^\s+//;
		$arg =~ s/^(?:IN|OUT|INOUT|VARIADIC)\s+//i;
		push @names, $arg =~ /^"?([a-z_][a-z_0-9]*)"?\s+[a-z"]/i ? $1 : '?';
	}
	return join(',', @names);
}

# C: "mnemo_store *st, char out[N + 1], int (*fn)(void *)" -> "st,out,fn"
sub c_names
{
	my @names;

	for my $arg (split_args($_[0]))
	{
		$arg =~ s/\[[^\]]*\]//g;
		next if $arg =~ /^\s*void\s*$/;
		if ($arg =~ /\(\s*\*\s*([a-z_][a-z_0-9]*)\s*\)/i)
		{
			push @names, $1;
			next;
		}
		push @names, $arg =~ /([a-z_][a-z_0-9]*|\.\.\.)\s*$/i ? $1 : '?';
	}
	return join(',', @names);
}

my $md = slurp($doc);
my (%documented, @functions);

if ($lang eq 'sql')
{
	while ($md =~ /`([a-z][a-z_0-9]*)\(((?:[^()`]|\([^()`]*\))*)\)/g)
	{
		$documented{$1}{sql_names($2)} = 1;
	}
	my $sql = slurp($source);
	while ($sql =~ /CREATE (?:OR REPLACE )?FUNCTION mnemo\.([a-z][a-z_0-9]*)\s*\(((?:[^()]|\([^()]*\))*)\)/g)
	{
		push @functions, [$1, sql_names($2)];
	}
}
else
{
	while ($md =~ /\b(mnemo_[a-z_0-9]+)\(((?:[^()`|]|\([^()`|]*\)(?:\([^()`|]*\))?)*)\)/g)
	{
		$documented{$1}{c_names($2)} = 1;
	}
	for my $header (sort glob("$source/mnemo/*.h"))
	{
		my $text = slurp($header);

		$text =~ s{/\*.*?\*/}{}gs;
		while ($text =~ /MNEMO_API\s+[^;(]*?\b(mnemo_[a-z_0-9]+)\s*\(((?:[^()]|\((?:[^()]|\([^()]*\))*\))*)\)\s*;/gs)
		{
			push @functions, [$1, c_names($2)];
		}
	}
}

my $differ = 0;
for my $f (@functions)
{
	my ($name, $names) = @$f;

	next if $documented{$name}{$names};
	$differ++;
	printf "%s(%s) is documented as %s\n", $name, $names,
	  join(' or ', map { "($_)" } sort keys %{$documented{$name} // {}}) || 'nothing';
}
printf "%d functions, %d documented with other arguments\n", scalar @functions, $differ;
exit($differ || !@functions ? 1 : 0);
