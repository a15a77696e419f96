#!/usr/bin/perl
# test/doc_signatures.pl SCRIPT DOC
#
# Every function the install script SCRIPT creates in schema mnemo (but the
# internal _ ones) is documented in DOC with the same arguments: each
# `name(arg type, ...)` of DOC is read as its list of argument names, and
# the script's CREATE FUNCTION must match one of its name's entries, in
# order (IN, OUT, INOUT and VARIADIC arguments alike).  Prints each that
# does not, with what DOC has; exits 1 if any.
use strict;
use warnings;

my ($script, $doc) = @ARGV;
die "usage: doc_signatures.pl SCRIPT DOC\n" unless defined $doc;

sub slurp
{
	my ($path) = @_;
	local $/;
	open(my $fh, '<', $path) or die "$path: $!\n";
	my $text = <$fh>;
	close $fh;
	return $text;
}

# "a text, OUT b int DEFAULT f(1, 2)" -> "a,b"; an argument without a type
# (or a name) is "?", so that "...same as..." never matches
sub arg_names
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
	my @names;
	for my $arg (@args)
	{
		$arg =~ s/^\s+//;
		$arg =~ s/^(?:IN|OUT|INOUT|VARIADIC)\s+//i;
		push @names, $arg =~ /^"?([a-z_][a-z_0-9]*)"?\s+[a-z"]/i ? $1 : '?';
	}
	return join(',', @names);
}

my $sql = slurp($script);
my $md = slurp($doc);
my (%documented, $functions, $differ);

while ($md =~ /`([a-z][a-z_0-9]*)\(((?:[^()`]|\([^()`]*\))*)\)/g)
{
	$documented{$1}{arg_names($2)} = 1;
}
while ($sql =~ /CREATE (?:OR REPLACE )?FUNCTION mnemo\.([a-z][a-z_0-9]*)\s*\(((?:[^()]|\([^()]*\))*)\)/g)
{
	my ($name, $names) = ($1, arg_names($2));

	$functions++;
	next if $documented{$name}{$names};
	$differ++;
	printf "%s(%s) is documented as %s\n", $name, $names,
		join(' or ', map { "($_)" } sort keys %{$documented{$name} // {}}) || 'nothing';
}
printf "%d functions, %d documented with other arguments\n", $functions // 0, $differ // 0;
exit($differ || !$functions ? 1 : 0);
